// Command miniapiserver serves the Kubernetes API from etcd. It only runs
// the command of package app, which turns flags into options and runs them.
// Run under the name etcd (a copy or symlink, as in an envtest asset
// directory), it is a standalone etcd instead.
package main

import (
	"fmt"
	"os"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
)

func main() {
	if app.IsEtcd(os.Args[0]) {
		app.RunEtcd()
	}
	if err := app.NewCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "miniapiserver:", err)
		os.Exit(1)
	}
}
