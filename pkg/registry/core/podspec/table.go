package podspec

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The CONTAINERS and IMAGES columns of kube's tables of pod templates and
// of the workloads that embed one.
const (
	ContainersColumnDescription = "Names of each container in the template."
	ImagesColumnDescription     = "Images referenced by each container in the template."
)

// ContainerCells are the CONTAINERS and IMAGES columns of workloads.
func ContainerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	im := make([]string, len(containers))
	for i, c := range containers {
		n[i], im[i] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}
