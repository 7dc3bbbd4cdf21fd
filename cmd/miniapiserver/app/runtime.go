package app

import "runtime"

func goVersion() string { return runtime.Version() }
func compiler() string  { return runtime.Compiler }
func platform() string  { return runtime.GOOS + "/" + runtime.GOARCH }
