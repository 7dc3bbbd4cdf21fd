// Package pvspec is the library of a persistent volume's spec: the
// defaults and validation of its volume source and access modes, as
// kube's pkg/apis/core/validation and pkg/apis/core/v1 defaults do them.
// Core's persistent volumes and claims use it, and so do the volume specs
// that storage.k8s.io's volume attachments inline (DefaultInline,
// ValidateInline). It sits below those groups in the registry, over
// core/validation.
package pvspec

import (
	"path"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

var (
	supportedAccessModes = sets.New(corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod)
	hostPathTypes        = sets.New(corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory,
		corev1.HostPathFileOrCreate, corev1.HostPathFile, corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev)
)

// DefaultSource gives the volume sources that have defaults kube's
// defaults.
func DefaultSource(src *corev1.PersistentVolumeSource) {
	if src.HostPath != nil && src.HostPath.Type == nil {
		unset := corev1.HostPathUnset
		src.HostPath.Type = &unset
	}
	if rbd := src.RBD; rbd != nil {
		rbd.RBDPool = orDefault(rbd.RBDPool, "rbd")
		rbd.RadosUser = orDefault(rbd.RadosUser, "admin")
		rbd.Keyring = orDefault(rbd.Keyring, "/etc/ceph/keyring")
	}
	if src.ISCSI != nil {
		src.ISCSI.ISCSIInterface = orDefault(src.ISCSI.ISCSIInterface, "default")
	}
	if d := src.AzureDisk; d != nil {
		if d.CachingMode == nil {
			m := corev1.AzureDataDiskCachingReadWrite
			d.CachingMode = &m
		}
		if d.FSType == nil {
			fs := "ext4"
			d.FSType = &fs
		}
		if d.ReadOnly == nil {
			ro := false
			d.ReadOnly = &ro
		}
		if d.Kind == nil {
			k := corev1.AzureSharedBlobDisk
			d.Kind = &k
		}
	}
	if s := src.ScaleIO; s != nil {
		s.StorageMode = orDefault(s.StorageMode, "ThinProvisioned")
		s.FSType = orDefault(s.FSType, "xfs")
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ValidateAccessModes: known modes, and ReadWriteOncePod alone.
func ValidateAccessModes(modes []corev1.PersistentVolumeAccessMode, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	rwop, others := false, false
	for _, mode := range modes {
		if !supportedAccessModes.Has(mode) {
			allErrs = append(allErrs, field.NotSupported(fldPath, mode, sets.List(supportedAccessModes)))
		}
		if mode == corev1.ReadWriteOncePod {
			rwop = true
		} else if supportedAccessModes.Has(mode) {
			others = true
		}
	}
	if rwop && others {
		allErrs = append(allErrs, field.Forbidden(fldPath, "may not use ReadWriteOncePod with other access modes"))
	}
	return allErrs
}

// ValidateSource requires exactly one volume source, and
// checks the common ones (hostPath, nfs, local, csi) as kube does.
func ValidateSource(spec *corev1.PersistentVolumeSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	numVolumes := 0
	src := reflect.ValueOf(spec.PersistentVolumeSource)
	for i := 0; i < src.NumField(); i++ {
		if src.Field(i).IsNil() {
			continue
		}
		name, _, _ := strings.Cut(src.Type().Field(i).Tag.Get("json"), ",")
		// kube counts flexVolume without refusing a second source.
		if numVolumes > 0 && name != "flexVolume" {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(name), "may not specify more than 1 volume type"))
			continue
		}
		numVolumes++
		allErrs = append(allErrs, validatePVSource(spec, name, fldPath)...)
	}
	if numVolumes == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must specify a volume type"))
	}
	return allErrs
}

func validatePVSource(spec *corev1.PersistentVolumeSpec, name string, specPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	fldPath := specPath.Child(name)
	switch name {
	case "hostPath":
		hp := spec.HostPath
		if hp.Path == "" {
			return field.ErrorList{field.Required(fldPath.Child("path"), "")}
		}
		allErrs = append(allErrs, corevalidation.ValidatePathNoBacksteps(hp.Path, fldPath.Child("path"))...)
		if hp.Type != nil && !hostPathTypes.Has(*hp.Type) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("type"), hp.Type, sets.List(hostPathTypes)))
		}
	case "nfs":
		if spec.NFS.Server == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("server"), ""))
		}
		if spec.NFS.Path == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("path"), ""))
		}
		if !path.IsAbs(spec.NFS.Path) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("path"), spec.NFS.Path, "must be an absolute path"))
		}
	case "local":
		if spec.Local.Path == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("path"), ""))
		} else {
			allErrs = append(allErrs, corevalidation.ValidatePathNoBacksteps(spec.Local.Path, fldPath.Child("path"))...)
		}
		if spec.NodeAffinity == nil || spec.NodeAffinity.Required == nil {
			allErrs = append(allErrs, field.Required(specPath.Child("nodeAffinity"), "Local volume requires node affinity"))
		}
	case "csi":
		allErrs = append(allErrs, validateCSIDriverName(spec.CSI.Driver, fldPath.Child("driver"))...)
		if spec.CSI.VolumeHandle == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("volumeHandle"), ""))
		}
	}
	return allErrs
}

func validateCSIDriverName(driver string, fldPath *field.Path) field.ErrorList {
	if driver == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	if len(driver) > 63 {
		allErrs = append(allErrs, field.TooLong(fldPath, "", 63))
	}
	return append(allErrs, corevalidation.ValidateDNS1123Subdomain(strings.ToLower(driver), fldPath)...)
}

// DefaultInline gives a volume spec inlined in
// another object (a VolumeAttachment's) the defaults kube gives it there:
// those of its capacity and volume source, not a volume's own.
func DefaultInline(spec *corev1.PersistentVolumeSpec) {
	corevalidation.DefaultResourceList(spec.Capacity)
	DefaultSource(&spec.PersistentVolumeSource)
}

// ValidateInline is kube's validation of a volume
// spec inlined in another object (a VolumeAttachment's, for migrated
// in-tree volumes): a CSI source, no claim, capacity, node affinity or
// class, Retain and Filesystem only.
func ValidateInline(spec *corev1.PersistentVolumeSpec, fldPath *field.Path) field.ErrorList {
	const inline = "may not be specified in the context of inline volumes"
	var allErrs field.ErrorList
	if spec.ClaimRef != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("claimRef"), inline))
	}
	if len(spec.Capacity) != 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("capacity"), inline))
	}
	if spec.CSI == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("csi"), "has to be specified in the context of inline volumes"))
	}
	if len(spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("accessModes"), ""))
	}
	allErrs = append(allErrs, ValidateAccessModes(spec.AccessModes, fldPath.Child("accessModes"))...)
	if p := spec.PersistentVolumeReclaimPolicy; p != "" && p != corev1.PersistentVolumeReclaimRetain {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("persistentVolumeReclaimPolicy"), "may only be Retain in the context of inline volumes"))
	}
	if spec.NodeAffinity != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("nodeAffinity"), inline))
	}
	allErrs = append(allErrs, ValidateSource(spec, fldPath)...)
	if spec.StorageClassName != "" {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("storageClassName"), inline))
	}
	if m := spec.VolumeMode; m != nil && *m != corev1.PersistentVolumeFilesystem {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("volumeMode"), "may not specify volumeMode other than Filesystem in the context of inline volumes"))
	}
	return allErrs
}
