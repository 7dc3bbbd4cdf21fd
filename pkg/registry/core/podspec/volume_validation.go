package podspec

import (
	"fmt"
	"path"
	"strings"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const fileModeErrorMsg = "must be a number between 0 and 0777 (octal), both inclusive"

// Fields a downward API volume may project.
var validVolumeFieldPaths = []string{
	"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
}

// validateVolumes validates a pod's volumes and returns the valid ones by
// name, for the containers' mounts.
func validateVolumes(volumes []corev1.Volume, podMeta *metav1.ObjectMeta, fldPath *field.Path) (map[string]corev1.VolumeSource, field.ErrorList) {
	var allErrs field.ErrorList
	names := sets.New[string]()
	vols := map[string]corev1.VolumeSource{}
	for i, v := range volumes {
		p := fldPath.Index(i)
		el := validateVolumeSource(&v.VolumeSource, p, v.Name, podMeta)
		if v.Name == "" {
			el = append(el, field.Required(p.Child("name"), ""))
		} else {
			el = append(el, corevalidation.ValidateDNS1123Label(v.Name, p.Child("name"))...)
		}
		if names.Has(v.Name) {
			el = append(el, field.Duplicate(p.Child("name"), v.Name))
		}
		if len(el) == 0 {
			names.Insert(v.Name)
			vols[v.Name] = v.VolumeSource
		} else {
			allErrs = append(allErrs, el...)
		}
	}
	return vols, allErrs
}

// validateVolumeSource requires exactly one volume type and validates the
// common ones (emptyDir, hostPath, secret, configMap, persistentVolumeClaim,
// downwardAPI, projected, nfs, csi, ephemeral, image). Other types count as
// a type but their fields are not checked.
func validateVolumeSource(src *corev1.VolumeSource, fldPath *field.Path, volName string, podMeta *metav1.ObjectMeta) field.ErrorList {
	var allErrs field.ErrorList
	n := 0
	for _, t := range volumeTypes(src, volName, podMeta) {
		if !t.set {
			continue
		}
		if n > 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(t.name), "may not specify more than 1 volume type"))
			continue
		}
		n++
		if t.validate != nil {
			allErrs = append(allErrs, t.validate(fldPath.Child(t.name))...)
		}
	}
	if n == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must specify a volume type"))
	}
	return allErrs
}

// volumeType is one member of a VolumeSource: whether it is set, its field
// name and, for the types checked, its validation.
type volumeType struct {
	set      bool
	name     string
	validate func(p *field.Path) field.ErrorList
}

// volumeTypes lists src's members in kube's order, which decides which of
// several set types is named as the extra one.
func volumeTypes(src *corev1.VolumeSource, volName string, podMeta *metav1.ObjectMeta) []volumeType {
	return []volumeType{
		{src.EmptyDir != nil, "emptyDir", func(p *field.Path) field.ErrorList { return validateEmptyDir(src.EmptyDir, p) }},
		{src.HostPath != nil, "hostPath", func(p *field.Path) field.ErrorList { return validateHostPath(src.HostPath, p) }},
		{src.GitRepo != nil, "gitRepo", nil},
		{src.GCEPersistentDisk != nil, "gcePersistentDisk", nil},
		{src.AWSElasticBlockStore != nil, "awsElasticBlockStore", nil},
		{src.Secret != nil, "secret", func(p *field.Path) field.ErrorList {
			s := src.Secret
			return validateKeysVolume(s.SecretName == "", "secretName", s.DefaultMode, s.Items, p)
		}},
		{src.NFS != nil, "nfs", func(p *field.Path) field.ErrorList { return validateNFS(src.NFS, p) }},
		{src.ISCSI != nil, "iscsi", nil},
		{src.Glusterfs != nil, "glusterfs", nil},
		{src.Flocker != nil, "flocker", nil},
		{src.PersistentVolumeClaim != nil, "persistentVolumeClaim", func(p *field.Path) field.ErrorList {
			if src.PersistentVolumeClaim.ClaimName == "" {
				return field.ErrorList{field.Required(p.Child("claimName"), "")}
			}
			return nil
		}},
		{src.RBD != nil, "rbd", nil},
		{src.Cinder != nil, "cinder", nil},
		{src.CephFS != nil, "cephFS", nil},
		{src.Quobyte != nil, "quobyte", nil},
		{src.DownwardAPI != nil, "downwardAPI", func(p *field.Path) field.ErrorList { return validateDownwardAPIVolume(src.DownwardAPI, p) }},
		{src.FC != nil, "fc", nil},
		{src.FlexVolume != nil, "flexVolume", nil},
		{src.ConfigMap != nil, "configMap", func(p *field.Path) field.ErrorList {
			c := src.ConfigMap
			return validateKeysVolume(c.Name == "", "name", c.DefaultMode, c.Items, p)
		}},
		{src.AzureFile != nil, "azureFile", nil},
		{src.VsphereVolume != nil, "vsphereVolume", nil},
		{src.PhotonPersistentDisk != nil, "photonPersistentDisk", nil},
		{src.PortworxVolume != nil, "portworxVolume", nil},
		{src.AzureDisk != nil, "azureDisk", nil},
		{src.StorageOS != nil, "storageos", nil},
		{src.Projected != nil, "projected", func(p *field.Path) field.ErrorList { return validateProjected(src.Projected, p) }},
		{src.ScaleIO != nil, "scaleIO", nil},
		{src.CSI != nil, "csi", func(p *field.Path) field.ErrorList { return validateCSIVolume(src.CSI, p) }},
		{src.Ephemeral != nil, "ephemeral", func(p *field.Path) field.ErrorList {
			return validateEphemeral(src.Ephemeral, p, volName, podMeta)
		}},
		{src.Image != nil, "image", func(p *field.Path) field.ErrorList { return validateImageVolume(src.Image, p) }},
	}
}

func validateEmptyDir(e *corev1.EmptyDirVolumeSource, p *field.Path) field.ErrorList {
	if l := e.SizeLimit; l != nil && l.Sign() < 0 {
		return field.ErrorList{field.Forbidden(p.Child("sizeLimit"), "SizeLimit field must be a valid resource quantity")}
	}
	return nil
}

func validateNFS(nfs *corev1.NFSVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if nfs.Server == "" {
		errs = append(errs, field.Required(p.Child("server"), ""))
	}
	if nfs.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	if !path.IsAbs(nfs.Path) {
		errs = append(errs, field.Invalid(p.Child("path"), nfs.Path, "must be an absolute path"))
	}
	return errs
}

func validateDownwardAPIVolume(d *corev1.DownwardAPIVolumeSource, p *field.Path) field.ErrorList {
	errs := validateFileMode(d.DefaultMode, p.Child("defaultMode"))
	for _, f := range d.Items {
		errs = append(errs, validateDownwardAPIFile(&f, p)...)
	}
	return errs
}

func validateCSIVolume(csi *corev1.CSIVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if csi.Driver == "" {
		errs = append(errs, field.Required(p.Child("driver"), ""))
	}
	if r := csi.NodePublishSecretRef; r != nil && r.Name == "" {
		errs = append(errs, field.Required(p.Child("nodePublishSecretRef", "name"), ""))
	}
	return errs
}

// validateEphemeral also checks the name of the claim kube will create for
// the pod's volume, when the pod's name is known.
func validateEphemeral(e *corev1.EphemeralVolumeSource, p *field.Path, volName string, podMeta *metav1.ObjectMeta) field.ErrorList {
	var errs field.ErrorList
	if e.VolumeClaimTemplate == nil {
		errs = append(errs, field.Required(p.Child("volumeClaimTemplate"), ""))
	}
	if podMeta != nil && podMeta.Name != "" && volName != "" {
		pvcName := podMeta.Name + "-" + volName
		for _, msg := range apivalidation.NameIsDNSSubdomain(pvcName, false) {
			errs = append(errs, field.Invalid(p.Child("name"), volName, fmt.Sprintf("PVC name %q: %v", pvcName, msg)))
		}
	}
	return errs
}

func validateImageVolume(img *corev1.ImageVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if img.Reference == "" {
		errs = append(errs, field.Required(p.Child("reference"), ""))
	}
	return append(errs, validateEnum(img.PullPolicy, p.Child("pullPolicy"), corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)...)
}

var supportedHostPathTypes = []corev1.HostPathType{
	corev1.HostPathUnset, corev1.HostPathBlockDev, corev1.HostPathCharDev, corev1.HostPathDirectory,
	corev1.HostPathDirectoryOrCreate, corev1.HostPathFile, corev1.HostPathFileOrCreate, corev1.HostPathSocket,
}

func validateHostPath(hp *corev1.HostPathVolumeSource, p *field.Path) field.ErrorList {
	if hp.Path == "" {
		return field.ErrorList{field.Required(p.Child("path"), "")}
	}
	allErrs := corevalidation.ValidatePathNoBacksteps(hp.Path, p.Child("path"))
	if t := hp.Type; t != nil {
		ok := false
		for _, s := range supportedHostPathTypes {
			ok = ok || *t == s
		}
		if !ok {
			allErrs = append(allErrs, field.NotSupported(p.Child("type"), t, supportedHostPathTypes))
		}
	}
	return allErrs
}

// validateKeysVolume validates a secret or config map volume: its name,
// mode and projected keys.
func validateKeysVolume(noName bool, nameField string, mode *int32, items []corev1.KeyToPath, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if noName {
		allErrs = append(allErrs, field.Required(p.Child(nameField), ""))
	}
	allErrs = append(allErrs, validateFileMode(mode, p.Child("defaultMode"))...)
	for i, kp := range items {
		allErrs = append(allErrs, validateKeyToPath(&kp, p.Child("items").Index(i))...)
	}
	return allErrs
}

func validateKeyToPath(kp *corev1.KeyToPath, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if kp.Key == "" {
		allErrs = append(allErrs, field.Required(p.Child("key"), ""))
	}
	if kp.Path == "" {
		allErrs = append(allErrs, field.Required(p.Child("path"), ""))
	}
	allErrs = append(allErrs, validateLocalNonReservedPath(kp.Path, p.Child("path"))...)
	return append(allErrs, validateFileMode(kp.Mode, p.Child("mode"))...)
}

func validateFileMode(mode *int32, p *field.Path) field.ErrorList {
	if mode != nil && (*mode > 0777 || *mode < 0) {
		return field.ErrorList{field.Invalid(p, *mode, fileModeErrorMsg)}
	}
	return nil
}

func validateDownwardAPIFile(f *corev1.DownwardAPIVolumeFile, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if f.Path == "" {
		allErrs = append(allErrs, field.Required(p.Child("path"), ""))
	}
	allErrs = append(allErrs, validateLocalNonReservedPath(f.Path, p.Child("path"))...)
	switch {
	case f.FieldRef != nil:
		allErrs = append(allErrs, validateObjectFieldSelector(f.FieldRef, validVolumeFieldPaths, p.Child("fieldRef"))...)
		if f.ResourceFieldRef != nil {
			allErrs = append(allErrs, field.Invalid(p, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case f.ResourceFieldRef != nil:
		allErrs = append(allErrs, validateResourceFieldSelector(f.ResourceFieldRef, true, p.Child("resourceFieldRef"))...)
	default:
		allErrs = append(allErrs, field.Required(p, "one of fieldRef and resourceFieldRef is required"))
	}
	return append(allErrs, validateFileMode(f.Mode, p.Child("mode"))...)
}

func validateProjected(pv *corev1.ProjectedVolumeSource, p *field.Path) field.ErrorList {
	allErrs := validateFileMode(pv.DefaultMode, p.Child("defaultMode"))
	paths := sets.New[string]()
	addPath := func(s, name string) {
		if s == "" {
			return
		}
		if paths.Has(s) {
			allErrs = append(allErrs, field.Invalid(p, name, "conflicting duplicate paths"))
		}
		paths.Insert(s)
	}
	// A secret's or a config map's projection (at kp): the object's name,
	// and the paths of its items.
	addKeys := func(kp *field.Path, name string, items []corev1.KeyToPath) {
		if name == "" {
			allErrs = append(allErrs, field.Required(kp.Child("name"), ""))
		}
		for j, item := range items {
			allErrs = append(allErrs, validateKeyToPath(&item, kp.Child("items").Index(j))...)
			addPath(item.Path, name)
		}
	}
	for i, s := range pv.Sources {
		n := 0
		sp := p.Child("sources").Index(i)
		if s.Secret != nil {
			n++
			addKeys(sp.Child("secret"), s.Secret.Name, s.Secret.Items)
		}
		if s.ConfigMap != nil {
			n++
			addKeys(sp.Child("configMap"), s.ConfigMap.Name, s.ConfigMap.Items)
		}
		if s.DownwardAPI != nil {
			n++
			for _, f := range s.DownwardAPI.Items {
				allErrs = append(allErrs, validateDownwardAPIFile(&f, sp.Child("downwardAPI"))...)
				addPath(f.Path, f.Path)
			}
		}
		if t := s.ServiceAccountToken; t != nil {
			n++
			tp := sp.Child("serviceAccountToken")
			switch exp := t.ExpirationSeconds; {
			case exp == nil:
				allErrs = append(allErrs, field.Required(tp.Child("expirationSeconds"), ""))
			case *exp < 10*60:
				allErrs = append(allErrs, field.Invalid(tp.Child("expirationSeconds"), *exp, "may not specify a duration less than 10 minutes"))
			case *exp > 1<<32:
				allErrs = append(allErrs, field.Invalid(tp.Child("expirationSeconds"), *exp, "may not specify a duration larger than 2^32 seconds"))
			}
			// kube reports these against the volume, not the source.
			if t.Path == "" {
				allErrs = append(allErrs, field.Required(p.Child("path"), ""))
			} else {
				allErrs = append(allErrs, validateLocalNonReservedPath(t.Path, p.Child("path"))...)
			}
		}
		if b := s.ClusterTrustBundle; b != nil {
			n++
			allErrs = append(allErrs, validateClusterTrustBundleProjection(b, sp.Child("clusterTrustBundle"))...)
			addPath(b.Path, b.Path)
		}
		if c := s.PodCertificate; c != nil {
			n++
			allErrs = append(allErrs, validatePodCertificateProjection(c, sp.Child("podCertificate"))...)
			for _, path := range []string{c.CredentialBundlePath, c.KeyPath, c.CertificateChainPath} {
				addPath(path, path)
			}
		}
		if n > 1 {
			allErrs = append(allErrs, field.Forbidden(sp, "may not specify more than 1 volume type per source"))
		}
	}
	return allErrs
}

func validateLocalDescendingPath(target string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if path.IsAbs(target) {
		allErrs = append(allErrs, field.Invalid(p, target, "must be a relative path"))
	}
	return append(allErrs, corevalidation.ValidatePathNoBacksteps(target, p)...)
}

func validateLocalNonReservedPath(target string, p *field.Path) field.ErrorList {
	allErrs := validateLocalDescendingPath(target, p)
	if strings.HasPrefix(target, "..") && !strings.HasPrefix(target, "../") {
		allErrs = append(allErrs, field.Invalid(p, target, "must not start with '..'"))
	}
	return allErrs
}
