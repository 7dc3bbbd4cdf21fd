// Command miniapiserver serves the Kubernetes API from etcd. It only runs
// the command of package app, which turns flags into options and runs them.
package main

import (
	"fmt"
	"os"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
)

func main() {
	if err := app.NewCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "miniapiserver:", err)
		os.Exit(1)
	}
}
