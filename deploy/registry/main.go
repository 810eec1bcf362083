// Command registry builds the CNCF Distribution image registry (Apache-2.0, v3) from its Go module:
// the nodes' image registry (deploy/lib/registry.sh), as Consul is built, since no binary download
// is reachable. Only the filesystem storage driver is linked in.
package main

import (
	"os"

	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() {
	if err := registry.RootCmd.Execute(); err != nil {
		os.Exit(1)
	}
}
