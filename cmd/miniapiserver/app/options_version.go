package app

import (
	"fmt"
	"io"
	"strconv"
)

// versionFlag is kube's --version (component-base's verflag): --version
// (or =true) prints "Kubernetes v1.37.2", --version=raw the whole
// version.Info, and the command exits before starting anything, as
// kube-apiserver does; --version=vX.Y.Z, which makes kube report another
// version, is refused.
type versionFlag string

func (v *versionFlag) String() string {
	if *v == "" {
		return "false"
	}
	return string(*v)
}

func (v *versionFlag) Type() string { return "version" }

// Set takes what kube's takes: raw, a version, or a bool.
func (v *versionFlag) Set(s string) error {
	if s == "raw" || len(s) > 0 && s[0] == 'v' {
		*v = versionFlag(s)
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*v = versionFlag(strconv.FormatBool(b))
	return nil
}

// print prints the version when the flag asks for it, and reports
// whether it did (the command then exits).
func (v versionFlag) print(out io.Writer) bool {
	switch v {
	case "raw":
		fmt.Fprintf(out, "%#v\n", Version())
	case "true":
		fmt.Fprintf(out, "Kubernetes %s\n", Version())
	default:
		return false
	}
	return true
}

func (v versionFlag) validate() error {
	if v != "" && v != "false" && v != "true" && v != "raw" {
		return fmt.Errorf("--version: %s: not supported by miniapiserver: it reports the version whose API it serves, %s", string(v), Version().GitVersion)
	}
	return nil
}
