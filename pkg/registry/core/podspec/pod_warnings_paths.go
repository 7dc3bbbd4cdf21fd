package podspec

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// overlappingPathWarnings flags volumes that map two keys to the same
// file, or a file where another key needs a directory ("a" and "a/b"):
// the kubelet then overwrites one or fails to mount with "is a directory"
// or "file exists". Each path is compared with every path before it in the
// same volume, and each overlap is reported, as kube v1.37 does.
func overlappingPathWarnings(volumes []corev1.Volume) []string {
	var w warnings
	for _, v := range volumes {
		switch {
		case v.ConfigMap != nil && v.ConfigMap.Items != nil:
			w.add(itemOverlaps(fmt.Sprintf("volume %q (ConfigMap %q): overlapping paths", v.Name, v.ConfigMap.Name), keyPaths(v.ConfigMap.Items))...)
		case v.Secret != nil && v.Secret.Items != nil:
			w.add(itemOverlaps(fmt.Sprintf("volume %q (Secret %q): overlapping paths", v.Name, v.Secret.SecretName), keyPaths(v.Secret.Items))...)
		case v.DownwardAPI != nil && v.DownwardAPI.Items != nil:
			w.add(itemOverlaps(fmt.Sprintf("volume %q (DownwardAPI): overlapping paths", v.Name), downwardPaths(v.DownwardAPI.Items))...)
		case v.Projected != nil:
			w.add(projectedOverlaps(v.Name, v.Projected.Sources)...)
		}
	}
	return w
}

// itemOverlaps compares the paths of one plain volume.
func itemOverlaps(prefix string, paths []string) []string {
	var w warnings
	for i, p := range paths {
		for _, earlier := range paths[:i] {
			if pathsOverlap(p, earlier) {
				w.addf("%s: %q with %q", prefix, p, earlier)
			}
		}
	}
	return w
}

// sourcedPath is a file of a projected volume and the source that puts
// it there, as the warning names it.
type sourcedPath struct{ path, source string }

// projectedOverlaps compares the paths of all sources of a projected
// volume, within and across sources. A source with nothing set is itself
// worth a warning: it projects nothing.
func projectedOverlaps(volume string, sources []corev1.VolumeProjection) []string {
	var w warnings
	var all []sourcedPath
	for _, s := range sources {
		var paths []string
		var source string
		switch {
		case s == (corev1.VolumeProjection{}):
			w.addf("volume %q (Projected) has no sources provided", volume)
			continue
		case s.ConfigMap != nil && s.ConfigMap.Items != nil:
			paths, source = keyPaths(s.ConfigMap.Items), fmt.Sprintf("ConfigMap %q", s.ConfigMap.Name)
		case s.Secret != nil && s.Secret.Items != nil:
			paths, source = keyPaths(s.Secret.Items), fmt.Sprintf("Secret %q", s.Secret.Name)
		case s.DownwardAPI != nil && s.DownwardAPI.Items != nil:
			paths, source = downwardPaths(s.DownwardAPI.Items), "DownwardAPI"
		case s.ServiceAccountToken != nil:
			paths, source = []string{trimPath(s.ServiceAccountToken.Path)}, "ServiceAccountToken"
		case s.ClusterTrustBundle != nil:
			name := s.ClusterTrustBundle.SignerName
			if s.ClusterTrustBundle.Name != nil {
				name = s.ClusterTrustBundle.Name
			}
			if name == nil {
				name = new(string)
			}
			paths, source = []string{trimPath(s.ClusterTrustBundle.Path)}, fmt.Sprintf("ClusterTrustBundle %q", *name)
		}
		for _, p := range paths {
			for _, earlier := range all {
				if pathsOverlap(p, earlier.path) {
					w.addf("volume %q (Projected): overlapping paths: %q (%s) with %q (%s)", volume, p, source, earlier.path, earlier.source)
				}
			}
			all = append(all, sourcedPath{p, source})
		}
	}
	return w
}

// pathsOverlap reports whether two files of a volume collide: the same
// path, or one inside the other taken as a directory.
func pathsOverlap(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// trimPath drops trailing slashes, which name the same file.
func trimPath(p string) string { return strings.TrimRight(p, "/") }

func keyPaths(items []corev1.KeyToPath) []string {
	paths := make([]string, len(items))
	for i, it := range items {
		paths[i] = trimPath(it.Path)
	}
	return paths
}

func downwardPaths(items []corev1.DownwardAPIVolumeFile) []string {
	paths := make([]string, len(items))
	for i, it := range items {
		paths[i] = trimPath(it.Path)
	}
	return paths
}
