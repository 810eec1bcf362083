// Command consul builds the Consul agent (MPL-2.0 release) from its Go module,
// because Debian ships no Consul package and no binary download is reachable.
package main

import (
	"fmt"
	"io"
	"log"
	"os"

	mcli "github.com/mitchellh/cli"

	"github.com/hashicorp/consul/command"
	"github.com/hashicorp/consul/command/cli"
	"github.com/hashicorp/consul/command/version"
	_ "github.com/hashicorp/consul/service_os"
)

func main() {
	log.SetOutput(io.Discard)
	ui := &cli.BasicUI{BasicUi: mcli.BasicUi{Writer: os.Stdout, ErrorWriter: os.Stderr}}
	commands := command.RegisteredCommands(ui)
	runner := &mcli.CLI{
		Args:        os.Args[1:],
		Commands:    commands,
		Name:        "consul",
		HelpWriter:  os.Stdout,
		ErrorWriter: os.Stderr,
	}
	if runner.IsVersion() {
		os.Exit(version.New(ui).Run(nil))
	}
	code, err := runner.Run()
	if err != nil {
		fmt.Fprintf(os.Stderr, "consul: %v\n", err)
		os.Exit(1)
	}
	os.Exit(code)
}
