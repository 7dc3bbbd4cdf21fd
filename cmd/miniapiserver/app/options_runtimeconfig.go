package app

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// runtimeConfig is --runtime-config, kube's key=value map of the group
// versions (group/version) and resources (group/version/resource) to
// serve or not, plus api/all, api/ga, api/beta and api/alpha. Every
// version this server serves is on by default, as kube's default-on
// versions are the only ones it serves.
type runtimeConfig map[string]string

func (c *runtimeConfig) String() string {
	parts := make([]string, 0, len(*c))
	for _, k := range slices.Sorted(maps.Keys(*c)) {
		parts = append(parts, k+"="+(*c)[k])
	}
	return strings.Join(parts, ",")
}

func (c *runtimeConfig) Type() string { return "mapStringString" }

// Set reads key[=value] pairs as component-base's ConfigurationMap: a
// key without a value means true; repeated flags add up.
func (c *runtimeConfig) Set(value string) error {
	if *c == nil {
		*c = runtimeConfig{}
	}
	for _, s := range strings.Split(value, ",") {
		if s == "" {
			continue
		}
		k, v, _ := strings.Cut(s, "=")
		(*c)[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return nil
}

// kubeAPIGroups are the API groups kube-apiserver 1.37 registers (any
// version): --runtime-config may name them; other groups are kube's
// "unknown api groups" error.
var kubeAPIGroups = []string{"", "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "apps",
	"authentication.k8s.io", "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io", "coordination.k8s.io",
	"discovery.k8s.io", "events.k8s.io", "flowcontrol.apiserver.k8s.io", "internal.apiserver.k8s.io", "networking.k8s.io",
	"node.k8s.io", "policy", "rbac.authorization.k8s.io", "resource.k8s.io", "scheduling.k8s.io", "storage.k8s.io",
	"storagemigration.k8s.io"}

// The version patterns of api/ga, api/beta and api/alpha (kube's).
var (
	gaVersion    = regexp.MustCompile(`^v\d+$`)
	betaVersion  = regexp.MustCompile(`^v\d+beta\d+$`)
	alphaVersion = regexp.MustCompile(`^v\d+alpha\d+$`)
)

// rtKey is a parsed key of the map: a group version, and a resource when
// the key names one.
type rtKey struct{ group, version, resource string }

// normalized is the map as kube completes it: the core group's keys (v1,
// api/v1, and their resources) become /v1..., api/legacy (kube's old
// name of the core group) is dropped.
func (c runtimeConfig) normalized() runtimeConfig {
	out := runtimeConfig{}
	for k, v := range c {
		switch {
		case k == "api/legacy":
		case k == "v1" || strings.HasPrefix(k, "v1/"):
			out["/"+k] = v
		case k == "api/v1" || strings.HasPrefix(k, "api/v1/"):
			out[strings.TrimPrefix(k, "api")] = v
		default:
			out[k] = v
		}
	}
	return out
}

// validate checks the flag as kube's APIEnablementOptions.Validate and
// MergeAPIResourceConfigs do (their messages), then refuses what this
// server cannot serve: a version or resource asked on that it does not
// serve. served is what the server serves: group -> version ->
// resources. apf is --enable-priority-and-fairness.
func (c runtimeConfig) validate(served map[string]map[string][]string, apf bool) error {
	if len(c) == 1 && c["api/all"] == "false" {
		return fmt.Errorf("--runtime-config: invalid runtime-config with only api/all=false")
	}
	n := c.normalized()
	var unknown []string
	for _, k := range slices.Sorted(maps.Keys(n)) {
		v := n[k]
		if strings.HasPrefix(k, "api/") && slices.Contains([]string{"all", "ga", "beta", "alpha"}, k[4:]) {
			if v != "true" && v != "false" {
				return fmt.Errorf("--runtime-config: invalid value %v=%v", k, v)
			}
			if v == "true" && k != "api/ga" {
				return fmt.Errorf("--runtime-config: %s=true: not supported by miniapiserver: it serves no beta or alpha API versions", k)
			}
			continue
		}
		key, err := parseRuntimeKey(k)
		if err != nil {
			return err
		}
		if !slices.Contains(kubeAPIGroups, key.group) {
			unknown = append(unknown, key.group+"/"+key.version)
			continue
		}
		on, err := runtimeValue(k, v)
		if err != nil {
			return err
		}
		if on && served != nil && !servesKey(served, key) {
			return fmt.Errorf("--runtime-config: %s=true: not supported by miniapiserver: it does not serve %s", k, strings.TrimPrefix(k, "/"))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("--runtime-config: unknown api groups %s", strings.Join(unknown, ","))
	}
	return c.validateFlowControl(apf)
}

// validateFlowControl is kube's check that priority and fairness keeps
// the API group its controller uses.
func (c runtimeConfig) validateFlowControl(apf bool) error {
	if !apf {
		return nil
	}
	for _, k := range []string{"flowcontrol.apiserver.k8s.io/v1", "api/ga", "api/all"} {
		switch c[k] {
		case "false":
			return fmt.Errorf("--runtime-config=%s=false conflicts with --enable-priority-and-fairness=true", k)
		case "true":
			return nil
		}
	}
	return nil
}

func parseRuntimeKey(k string) (rtKey, error) {
	tokens := strings.Split(k, "/")
	if len(tokens) != 2 && len(tokens) != 3 || tokens[1] == "" {
		return rtKey{}, fmt.Errorf("--runtime-config: runtime-config invalid key %s", k)
	}
	key := rtKey{group: tokens[0], version: tokens[1]}
	if len(tokens) == 3 {
		key.resource = tokens[2]
		if strings.ToLower(key.resource) != key.resource {
			return rtKey{}, fmt.Errorf("--runtime-config: invalid key %v: group/version/resource and resource is always lowercase plural, not %q", k, key.resource)
		}
	}
	return key, nil
}

// runtimeValue is a key's value: empty is true, as kube's.
func runtimeValue(k, v string) (bool, error) {
	if v == "" {
		return true, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("--runtime-config: invalid value of %s: %s, err: %v", k, v, err)
	}
	return b, nil
}

func servesKey(served map[string]map[string][]string, key rtKey) bool {
	resources, ok := served[key.group][key.version]
	return ok && (key.resource == "" || slices.Contains(resources, key.resource))
}

// enabled reports whether the resource (a top-level resource name) of
// group/version is served, with kube's precedence: a resource's own key,
// else its version's key, else api/all, api/ga, api/beta, api/alpha in
// that order (a later one overriding), else on.
func (c runtimeConfig) enabled(group, version, resource string) bool {
	n := c.normalized()
	if v, ok := n[group+"/"+version+"/"+resource]; ok {
		on, _ := runtimeValue("", v)
		return on
	}
	if v, ok := n[group+"/"+version]; ok {
		on, _ := runtimeValue("", v)
		return on
	}
	on := true
	for _, m := range []struct {
		key     string
		matches bool
	}{{"api/all", true}, {"api/ga", gaVersion.MatchString(version)}, {"api/beta", betaVersion.MatchString(version)},
		{"api/alpha", alphaVersion.MatchString(version)}} {
		if v, ok := n[m.key]; ok && m.matches {
			on = v == "true"
		}
	}
	return on
}

// filter is the part of groups --runtime-config serves: the versions and
// resources (with their subresources) turned off are left out, and a
// group left without a version. The storage is shared, not copied: the
// server's wiring still uses the stores of the resources not served.
func (c runtimeConfig) filter(groups []rest.APIGroupInfo) []rest.APIGroupInfo {
	if len(c) == 0 {
		return groups
	}
	var out []rest.APIGroupInfo
	for _, g := range groups {
		f := rest.APIGroupInfo{GroupName: g.GroupName, VersionedResourcesStorageMap: map[string]map[string]rest.Storage{}}
		for _, version := range g.PrioritizedVersions {
			resources := map[string]rest.Storage{}
			for name, st := range g.VersionedResourcesStorageMap[version] {
				resource, _, _ := strings.Cut(name, "/")
				if c.enabled(g.GroupName, version, resource) {
					resources[name] = st
				}
			}
			if len(resources) > 0 {
				f.PrioritizedVersions = append(f.PrioritizedVersions, version)
				f.VersionedResourcesStorageMap[version] = resources
			}
		}
		if len(f.PrioritizedVersions) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// servedResources is what groups serve: group -> version -> top-level
// resources.
func servedResources(groups []rest.APIGroupInfo) map[string]map[string][]string {
	served := map[string]map[string][]string{}
	for _, g := range groups {
		versions := map[string][]string{}
		for version, resources := range g.VersionedResourcesStorageMap {
			for name := range resources {
				if !strings.Contains(name, "/") {
					versions[version] = append(versions[version], name)
				}
			}
		}
		served[g.GroupName] = versions
	}
	return served
}

// openAPIFilter says which paths of the generated OpenAPI documents are
// served, once --runtime-config has left served of all (every group
// built): the paths of a group, version or resource turned off are not,
// as kube's documents list only what it serves. nil when the flag turns
// nothing off.
func (c runtimeConfig) openAPIFilter(all, served []rest.APIGroupInfo) openapi.PathFilter {
	if len(c) == 0 {
		return nil
	}
	built, on := servedResources(all), servedResources(served)
	return func(path string) bool {
		group, version, resource, ok := openapi.APIPath(path)
		if _, known := built[group]; !ok || !known {
			return true // not a path of a group built here: not ours to drop
		}
		if version == "" {
			return len(on[group]) > 0
		}
		if _, known := built[group][version]; !known {
			return true
		}
		resources, served := on[group][version]
		return served && (resource == "" || slices.Contains(resources, resource) || !slices.Contains(built[group][version], resource))
	}
}
