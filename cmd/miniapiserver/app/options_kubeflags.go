package app

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// kubeFlag is a flag of kube-apiserver v1.37.2's command line, as
// hack/kubeflags read it from kube's code (kubeAPIServerFlags): its
// --help section, pflag type, default (as --help prints it), and whether
// kube deprecates or hides it.
type kubeFlag struct {
	Name, Section, Type, Default string
	Deprecated, Hidden           bool
}

// The policy for kube-apiserver's flags: each one either works here (this
// server registers it, with kube's meaning), or it is registered by
// addRefusedKubeFlags so that kube's command lines parse, and Validate
// refuses it with the reason refusedFlagReason gives, unless it is set to
// exactly kube's default: a flag at its default asks for nothing this
// server does not do, so command lines that spell out defaults (kubeadm's
// and kind's do) run unchanged.

// refusedValue is the value of a refused flag: it records what the command
// line set, typed as kube's flag for --help, and validates nothing at
// parse time (Validate says why the flag is refused).
type refusedValue struct {
	kube kubeFlag
	set  []string
}

func (v *refusedValue) String() string {
	if len(v.set) == 0 {
		return v.kube.Default
	}
	return strings.Join(v.set, ",")
}
func (v *refusedValue) Type() string { return v.kube.Type }
func (v *refusedValue) Set(s string) error {
	v.set = append(v.set, s)
	return nil
}

// refusedFlags are the refused flags registered on a command line, by
// name.
type refusedFlags map[string]*refusedValue

// addRefusedKubeFlags registers every kube-apiserver flag that fs does
// not have yet as a refused flag (so it must be called after every
// supported flag is registered: one defined later on another branch
// simply takes its place).
func (r refusedFlags) addRefusedKubeFlags(fs *pflag.FlagSet) {
	for _, kf := range kubeAPIServerFlags {
		if fs.Lookup(kf.Name) != nil || kf.Name == "help" {
			continue
		}
		v := &refusedValue{kube: kf}
		f := fs.VarPF(v, kf.Name, "", "kube-apiserver's flag, not supported by miniapiserver: "+refusedFlagReason(kf.Name)+
			". Accepted only at kube's default.")
		f.DefValue = kf.Default
		if kf.Type == "bool" {
			f.NoOptDefVal = "true" // --flag alone means true, as for kube's bools
		}
		// kube hides its deprecated flags from --help; so does this.
		f.Hidden = kf.Hidden || kf.Deprecated
		r[kf.Name] = v
	}
}

// validate refuses the first refused flag (by name) set to anything but
// kube's default.
func (r refusedFlags) validate() error {
	names := make([]string, 0, len(r))
	for n, v := range r {
		if len(v.set) > 0 {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		v := r[n]
		for _, s := range v.set {
			if !sameAsDefault(v.kube.Type, v.kube.Default, s) {
				return fmt.Errorf("--%s: not supported by miniapiserver: %s (only kube's default, %q, is accepted)", n, refusedFlagReason(n), v.kube.Default)
			}
		}
	}
	return nil
}

// sameAsDefault reports whether s, given to a flag of pflag type typ,
// means the same as kube's default def (as --help prints it): "1m" is
// "1m0s", "" is an empty list "[]", "True" is "true".
func sameAsDefault(typ, def, s string) bool {
	if s == def {
		return true
	}
	switch typ {
	case "bool":
		a, err1 := strconv.ParseBool(s)
		b, err2 := strconv.ParseBool(def)
		return err1 == nil && err2 == nil && a == b
	case "duration":
		a, err1 := time.ParseDuration(s)
		b, err2 := time.ParseDuration(def)
		return err1 == nil && err2 == nil && a == b
	case "int", "int32", "int64", "uint", "uint32", "uint64", "float32", "float64":
		a, err1 := strconv.ParseFloat(s, 64)
		b, err2 := strconv.ParseFloat(def, 64)
		return err1 == nil && err2 == nil && a == b
	case "strings", "stringSlice", "stringArray", "ipSlice":
		return strings.Trim(def, "[]") == s
	}
	return false
}
