package podspec

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
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

// WorkloadColumns are the columns of kube's tables of workloads: NAME, the
// kind's own columns, AGE, then the wide CONTAINERS and IMAGES
// (ContainerCells) and SELECTOR, described by selectorDoc (no SELECTOR
// when it is "": stateful sets print none).
func WorkloadColumns(selectorDoc string, own []metav1.TableColumnDefinition) []metav1.TableColumnDefinition {
	columns := append([]metav1.TableColumnDefinition{generic.NameColumn}, own...)
	columns = append(columns, generic.AgeColumn,
		metav1.TableColumnDefinition{Name: "Containers", Type: "string", Priority: 1, Description: ContainersColumnDescription},
		metav1.TableColumnDefinition{Name: "Images", Type: "string", Priority: 1, Description: ImagesColumnDescription})
	if selectorDoc != "" {
		columns = append(columns, metav1.TableColumnDefinition{Name: "Selector", Type: "string", Priority: 1, Description: selectorDoc})
	}
	return columns
}
