//go:build tools

// Package tools pins VictoriaMetrics single-node (Apache-2.0) as this module's dependency:
// deploy/lib/metrics.sh builds its main package, github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics,
// from the Go module proxy, as Consul and the registry are built, since no binary download is reachable.
package tools

import _ "github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics"
