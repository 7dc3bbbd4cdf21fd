package aggregator

import (
	"slices"
	"sort"

	utilversion "k8s.io/apimachinery/pkg/version"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/discovery"
)

// Discovery returns local (the server's own group versions, in the order
// its discovery lists them) with the group versions of the APIServices
// of list that name a service added where kube's aggregator lists them:
// groups by their APIServices' highest groupPriorityMinimum (then by the
// APIService's name), versions by versionPriority (then kube's version
// order). The local groups keep their order: a remote group goes after
// the group kube lists just before it (the Local APIServices in list
// give the local groups' priorities). A remote group version whose
// resources were never fetched is listed with none, Stale, as kube's
// aggregated discovery does.
func Discovery(local []*discovery.GroupVersion, list []Remote) []*discovery.GroupVersion {
	remote := map[string][]Remote{}
	for _, r := range list {
		if r.APIService.Spec.Service != nil && r.APIService.Spec.Group != "" {
			remote[r.APIService.Spec.Group] = append(remote[r.APIService.Spec.Group], r)
		}
	}
	if len(remote) == 0 {
		return local
	}
	// blocks are the groups in the order listed, each with its versions.
	type block struct {
		group string
		gvs   []*discovery.GroupVersion
	}
	var blocks []*block
	byGroup := map[string]*block{}
	for _, gv := range local {
		b := byGroup[gv.Group]
		if b == nil {
			b = &block{group: gv.Group}
			byGroup[gv.Group] = b
			blocks = append(blocks, b)
		}
		b.gvs = append(b.gvs, gv)
	}
	// anchor is the group after which the next remote group goes: kube
	// lists apiregistration.k8s.io (and the core group) first.
	anchor := ""
	if byGroup[apiregistrationv1.GroupName] != nil {
		anchor = apiregistrationv1.GroupName
	}
	for _, group := range groupOrder(list) {
		rs, isRemote := remote[group]
		if !isRemote {
			if byGroup[group] != nil {
				anchor = group
			}
			continue
		}
		gvs := remoteGroupVersions(rs)
		if b := byGroup[group]; b != nil { // a group served here and by an extension
			b.gvs = append(b.gvs, gvs...)
			anchor = group
			continue
		}
		b := &block{group: group, gvs: gvs}
		at := 0
		if i := slices.IndexFunc(blocks, func(b *block) bool { return b.group == anchor }); i >= 0 {
			at = i + 1
		} else if len(blocks) > 0 && blocks[0].group == "" {
			at = 1 // after the core group
		}
		blocks = slices.Insert(blocks, at, b)
		byGroup[group] = b
		anchor = group
	}
	var out []*discovery.GroupVersion
	for _, b := range blocks {
		out = append(out, b.gvs...)
	}
	return out
}

// groupOrder lists the groups of list as kube's aggregator orders /apis:
// APIServices sorted by groupPriorityMinimum (highest first), then name;
// a group comes where its first APIService does.
func groupOrder(list []Remote) []string {
	services := make([]*apiregistrationv1.APIService, 0, len(list))
	for _, r := range list {
		services = append(services, r.APIService)
	}
	sort.SliceStable(services, func(i, j int) bool {
		if services[i].Spec.GroupPriorityMinimum != services[j].Spec.GroupPriorityMinimum {
			return services[i].Spec.GroupPriorityMinimum > services[j].Spec.GroupPriorityMinimum
		}
		return services[i].Name < services[j].Name
	})
	var out []string
	seen := map[string]bool{}
	for _, s := range services {
		if !seen[s.Spec.Group] {
			seen[s.Spec.Group] = true
			out = append(out, s.Spec.Group)
		}
	}
	return out
}

// remoteGroupVersions are the group versions of one remote group, the
// preferred (highest versionPriority) first.
func remoteGroupVersions(rs []Remote) []*discovery.GroupVersion {
	sorted := slices.Clone(rs)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i].APIService.Spec, sorted[j].APIService.Spec
		if a.VersionPriority != b.VersionPriority {
			return a.VersionPriority > b.VersionPriority
		}
		return utilversion.CompareKubeAwareVersionStrings(a.Version, b.Version) > 0
	})
	out := make([]*discovery.GroupVersion, 0, len(sorted))
	for _, r := range sorted {
		s := r.APIService.Spec
		out = append(out, &discovery.GroupVersion{
			Group: s.Group, Version: s.Version, Resources: r.Resources,
			Remote: true, Stale: r.Stale || r.Resources == nil,
		})
	}
	return out
}
