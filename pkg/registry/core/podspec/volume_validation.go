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
	one := func(set bool, name string, validate func(p *field.Path) field.ErrorList) {
		if !set {
			return
		}
		if n > 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(name), "may not specify more than 1 volume type"))
			return
		}
		n++
		if validate != nil {
			allErrs = append(allErrs, validate(fldPath.Child(name))...)
		}
	}
	one(src.EmptyDir != nil, "emptyDir", func(p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if l := src.EmptyDir.SizeLimit; l != nil && l.Sign() < 0 {
			errs = append(errs, field.Forbidden(p.Child("sizeLimit"), "SizeLimit field must be a valid resource quantity"))
		}
		return errs
	})
	one(src.HostPath != nil, "hostPath", func(p *field.Path) field.ErrorList { return validateHostPath(src.HostPath, p) })
	one(src.GitRepo != nil, "gitRepo", nil)
	one(src.GCEPersistentDisk != nil, "gcePersistentDisk", nil)
	one(src.AWSElasticBlockStore != nil, "awsElasticBlockStore", nil)
	one(src.Secret != nil, "secret", func(p *field.Path) field.ErrorList {
		s := src.Secret
		return validateKeysVolume(s.SecretName == "", "secretName", s.DefaultMode, s.Items, p)
	})
	one(src.NFS != nil, "nfs", func(p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if src.NFS.Server == "" {
			errs = append(errs, field.Required(p.Child("server"), ""))
		}
		if src.NFS.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		}
		if !path.IsAbs(src.NFS.Path) {
			errs = append(errs, field.Invalid(p.Child("path"), src.NFS.Path, "must be an absolute path"))
		}
		return errs
	})
	one(src.ISCSI != nil, "iscsi", nil)
	one(src.Glusterfs != nil, "glusterfs", nil)
	one(src.Flocker != nil, "flocker", nil)
	one(src.PersistentVolumeClaim != nil, "persistentVolumeClaim", func(p *field.Path) field.ErrorList {
		if src.PersistentVolumeClaim.ClaimName == "" {
			return field.ErrorList{field.Required(p.Child("claimName"), "")}
		}
		return nil
	})
	one(src.RBD != nil, "rbd", nil)
	one(src.Cinder != nil, "cinder", nil)
	one(src.CephFS != nil, "cephFS", nil)
	one(src.Quobyte != nil, "quobyte", nil)
	one(src.DownwardAPI != nil, "downwardAPI", func(p *field.Path) field.ErrorList {
		errs := validateFileMode(src.DownwardAPI.DefaultMode, p.Child("defaultMode"))
		for _, f := range src.DownwardAPI.Items {
			errs = append(errs, validateDownwardAPIFile(&f, p)...)
		}
		return errs
	})
	one(src.FC != nil, "fc", nil)
	one(src.FlexVolume != nil, "flexVolume", nil)
	one(src.ConfigMap != nil, "configMap", func(p *field.Path) field.ErrorList {
		c := src.ConfigMap
		return validateKeysVolume(c.Name == "", "name", c.DefaultMode, c.Items, p)
	})
	one(src.AzureFile != nil, "azureFile", nil)
	one(src.VsphereVolume != nil, "vsphereVolume", nil)
	one(src.PhotonPersistentDisk != nil, "photonPersistentDisk", nil)
	one(src.PortworxVolume != nil, "portworxVolume", nil)
	one(src.AzureDisk != nil, "azureDisk", nil)
	one(src.StorageOS != nil, "storageos", nil)
	one(src.Projected != nil, "projected", func(p *field.Path) field.ErrorList { return validateProjected(src.Projected, p) })
	one(src.ScaleIO != nil, "scaleIO", nil)
	one(src.CSI != nil, "csi", func(p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if src.CSI.Driver == "" {
			errs = append(errs, field.Required(p.Child("driver"), ""))
		}
		if r := src.CSI.NodePublishSecretRef; r != nil && r.Name == "" {
			errs = append(errs, field.Required(p.Child("nodePublishSecretRef", "name"), ""))
		}
		return errs
	})
	one(src.Ephemeral != nil, "ephemeral", func(p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if src.Ephemeral.VolumeClaimTemplate == nil {
			errs = append(errs, field.Required(p.Child("volumeClaimTemplate"), ""))
		}
		if podMeta != nil && podMeta.Name != "" && volName != "" {
			pvcName := podMeta.Name + "-" + volName
			for _, msg := range apivalidation.NameIsDNSSubdomain(pvcName, false) {
				errs = append(errs, field.Invalid(p.Child("name"), volName, fmt.Sprintf("PVC name %q: %v", pvcName, msg)))
			}
		}
		return errs
	})
	one(src.Image != nil, "image", func(p *field.Path) field.ErrorList {
		var errs field.ErrorList
		if src.Image.Reference == "" {
			errs = append(errs, field.Required(p.Child("reference"), ""))
		}
		return append(errs, validateEnum(src.Image.PullPolicy, p.Child("pullPolicy"), corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)...)
	})
	if n == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must specify a volume type"))
	}
	return allErrs
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
	for i, s := range pv.Sources {
		n := 0
		sp := p.Child("sources").Index(i)
		if s.Secret != nil {
			n++
			if s.Secret.Name == "" {
				allErrs = append(allErrs, field.Required(sp.Child("secret", "name"), ""))
			}
			for j, kp := range s.Secret.Items {
				allErrs = append(allErrs, validateKeyToPath(&kp, sp.Child("secret", "items").Index(j))...)
				addPath(kp.Path, s.Secret.Name)
			}
		}
		if s.ConfigMap != nil {
			n++
			if s.ConfigMap.Name == "" {
				allErrs = append(allErrs, field.Required(sp.Child("configMap", "name"), ""))
			}
			for j, kp := range s.ConfigMap.Items {
				allErrs = append(allErrs, validateKeyToPath(&kp, sp.Child("configMap", "items").Index(j))...)
				addPath(kp.Path, s.ConfigMap.Name)
			}
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
