package app

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// FuzzWatchCacheSizes: any value of --watch-cache-sizes is either taken
// (every entry a non-empty resource name and a size >= 0) or refused
// with an error naming the flag.
func FuzzWatchCacheSizes(f *testing.F) {
	for _, seed := range []string{
		"pods#1000,deployments.apps#0", "configmaps#0", "", "pods", "#5", "pods#-1", "pods#1e3",
		`"pods#1,nodes#2"`, "pods#99999999999999999999", "a#1,a#2", " pods # 3 ", "pods#1,,nodes#2",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		o := NewOptions()
		fs := pflag.NewFlagSet("miniapiserver", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse([]string{"--watch-cache-sizes=" + value}); err != nil {
			if !strings.Contains(err.Error(), "watch-cache-sizes") {
				t.Fatalf("a parse error that does not name the flag: %v", err)
			}
			return
		}
		sizes, err := parseWatchCacheSizes(o.WatchCacheSizes)
		if verr := o.Validate(); (verr == nil) != (err == nil) {
			t.Fatalf("Validate says %v, parseWatchCacheSizes %v", verr, err)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--watch-cache-sizes: ") {
				t.Fatalf("an error that does not name the flag: %v", err)
			}
			return
		}
		for name, n := range sizes {
			if name == "" || n < 0 {
				t.Fatalf("%q gave the entry %q#%d", value, name, n)
			}
		}
	})
}
