/*
 * storage.k8s.io/v1.
 */
#include <string.h>

#include "kindcols_int.h"

/* A *bool, or dflt when it is not set. */
static bool flag(json_t *o, const char *key, bool dflt) {
	json_t *v = json_object_get(o, key);
	return json_is_boolean(v) ? json_is_true(v) : dflt;
}

/* storage.k8s.io StorageClass */
static const struct kinf_kindcols_column storageclass_columns[] = {
	COLUMN_NAME,
	{ "Provisioner", "string", "", 0,
		"provisioner indicates the type of the provisioner." },
	{ "ReclaimPolicy", "string", "", 0,
		"reclaimPolicy controls the reclaimPolicy for dynamically provisioned "
		"PersistentVolumes of this storage class. Defaults to Delete." },
	{ "VolumeBindingMode", "string", "", 0,
		"volumeBindingMode indicates how PersistentVolumeClaims should be "
		"provisioned and bound.  When unset, VolumeBindingImmediate is used. This "
		"field is only honored by servers that enable the VolumeScheduling feature." },
	{ "AllowVolumeExpansion", "string", "", 0,
		"allowVolumeExpansion shows whether the storage class allow volume expand." },
	COLUMN_AGE,
};

/* printStorageClass: " (default)" after the name of the default class */
static void storageclass_cells(struct row *r, json_t *sc) {
	json_t *ann = at(sc, "metadata", "annotations", NULL);
	bool is_default = strcmp(str(ann, "storageclass.kubernetes.io/is-default-class"),
			"true") == 0 || strcmp(str(ann,
			"storageclass.beta.kubernetes.io/is-default-class"), "true") == 0;
	cell_strf(r, "%s%s", obj_name(sc), is_default ? " (default)" : "");
	cell_str(r, str(sc, "provisioner"));
	cell_str(r, str(sc, "reclaimPolicy")[0] ? str(sc, "reclaimPolicy") : "Delete");
	cell_str(r, str(sc, "volumeBindingMode")[0] ? str(sc, "volumeBindingMode") :
			"Immediate");
	cell_bool(r, flag(sc, "allowVolumeExpansion", false));
	cell_created(r, sc);
}

/* storage.k8s.io CSIDriver */
static const struct kinf_kindcols_column csidriver_columns[] = {
	COLUMN_NAME,
	{ "AttachRequired", "boolean", "", 0,
		"attachRequired indicates this CSI volume driver requires an attach "
		"operation (because it implements the CSI ControllerPublishVolume() method), "
		"and that the Kubernetes attach detach controller should call the attach "
		"volume interface which checks the volumeattachment status and waits until "
		"the volume is attached before proceeding to mounting. The CSI "
		"external-attacher coordinates with CSI volume driver and updates the "
		"volumeattachment status when the attach operation is complete. If the "
		"CSIDriverRegistry feature gate is enabled and the value is specified to "
		"false, the attach operation will be skipped. Otherwise the attach operation "
		"will be called.\n\nThis field is immutable." },
	{ "PodInfoOnMount", "boolean", "", 0,
		"podInfoOnMount indicates this CSI volume driver requires additional pod "
		"information (like podName, podUID, etc.) during mount operations, if set to "
		"true. If set to false, pod information will not be passed on mount. Default "
		"is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver "
		"deployment. If true, Kubelet will pass pod information as VolumeContext in "
		"the CSI NodePublishVolume() calls. The CSI driver is responsible for "
		"parsing and validating the information passed in as VolumeContext.\n\nThe "
		"following VolumeConext will be passed if podInfoOnMount is set to true. "
		"This list might grow, but the prefix will be used. "
		"\"csi.storage.k8s.io/pod.name\": pod.Name "
		"\"csi.storage.k8s.io/pod.namespace\": pod.Namespace "
		"\"csi.storage.k8s.io/pod.uid\": string(pod.UID) "
		"\"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral "
		"inline volume\n                                defined by a "
		"CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is "
		"a new feature in Kubernetes 1.16. It is only required for drivers which "
		"support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. "
		"Other drivers can leave pod info disabled and/or ignore this field. As "
		"Kubernetes 1.15 doesn't support this field, drivers can only support one "
		"mode when deployed on such a cluster and the deployment determines which "
		"mode that is, for example via a command line parameter of the "
		"driver.\n\nThis field is immutable." },
	{ "StorageCapacity", "boolean", "", 0,
		"storageCapacity indicates that the CSI volume driver wants pod scheduling "
		"to consider the storage capacity that the driver deployment will report by "
		"creating CSIStorageCapacity objects with capacity information, if set to "
		"true.\n\nThe check can be enabled immediately when deploying a driver. In "
		"that case, provisioning new volumes with late binding will pause until the "
		"driver deployment has published some suitable CSIStorageCapacity "
		"object.\n\nAlternatively, the driver can be deployed with the field unset "
		"or false and it can be flipped later when storage capacity information has "
		"been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now "
		"is mutable." },
	{ "TokenRequests", "string", "", 0,
		"tokenRequests indicates the CSI driver needs pods' service account tokens "
		"it is mounting volume for to do necessary authentication. Kubelet will pass "
		"the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI "
		"driver should parse and validate the following VolumeContext: "
		"\"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    "
		"\"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in "
		"RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be "
		"different and at most one token is empty string. To receive a new token "
		"after expiry, RequiresRepublish can be used to trigger NodePublishVolume "
		"periodically." },
	{ "RequiresRepublish", "boolean", "", 0,
		"requiresRepublish indicates the CSI driver wants `NodePublishVolume` being "
		"periodically called to reflect any possible change in the mounted volume. "
		"This field defaults to false.\n\nNote: After a successful initial "
		"NodePublishVolume call, subsequent calls to NodePublishVolume should only "
		"update the contents of the volume. New mount points will not be seen by a "
		"running container." },
	{ "Modes", "string", "", 0,
		"volumeLifecycleModes defines what kind of volumes this CSI volume driver "
		"supports. The default if the list is empty is \"Persistent\", which is the "
		"usage defined by the CSI specification and implemented in Kubernetes via "
		"the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this "
		"mode, volumes are defined inline inside the pod spec with CSIVolumeSource "
		"and their lifecycle is tied to the lifecycle of that pod. A driver has to "
		"be aware of this because it is only going to get a NodePublishVolume call "
		"for such a volume.\n\nFor more information about implementing this mode, "
		"see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A "
		"driver can support one or more of these modes and more modes may be added "
		"in the future.\n\nThis field is beta. This field is immutable." },
	COLUMN_AGE,
};

/* printCSIDriver */
static void csidriver_cells(struct row *r, json_t *d) {
	json_t *spec = json_object_get(d, "spec"), *v;
	json_t *tokens = json_object_get(spec, "tokenRequests");
	struct kinf_buf b = {0};
	size_t i;
	cell_str(r, obj_name(d));
	cell_bool(r, flag(spec, "attachRequired", true));
	cell_bool(r, flag(spec, "podInfoOnMount", false));
	cell_bool(r, flag(spec, "storageCapacity", false));
	json_array_foreach(tokens, i, v) {
		kinf_buf_putf(&b, "%s%s", i ? "," : "", str(v, "audience"));
	}
	cell_buf(r, &b, json_is_array(tokens) ? "" : "<unset>");
	cell_bool(r, flag(spec, "requiresRepublish", false));
	json_array_foreach(json_object_get(spec, "volumeLifecycleModes"), i, v) {
		kinf_buf_putf(&b, "%s%s", i ? "," : "", json_string_value(v) ?
				json_string_value(v) : "");
	}
	cell_buf(r, &b, "<none>");
	cell_created(r, d);
	kinf_buf_release(&b);
}

/* storage.k8s.io CSINode */
static const struct kinf_kindcols_column csinode_columns[] = {
	COLUMN_NAME,
	{ "Drivers", "integer", "", 0,
		"Drivers indicates the number of CSI drivers registered on the node" },
	COLUMN_AGE,
};

static void csinode_cells(struct row *r, json_t *n) {
	cell_str(r, obj_name(n));
	cell_int(r, (long long)json_array_size(at(n, "spec", "drivers", NULL)));
	cell_created(r, n);
}

/* storage.k8s.io VolumeAttachment */
static const struct kinf_kindcols_column volumeattachment_columns[] = {
	COLUMN_NAME,
	{ "Attacher", "string", "name", 0,
		"attacher indicates the name of the volume driver that MUST handle this "
		"request. This is the name returned by GetPluginName()." },
	{ "PV", "string", "", 0,
		"persistentVolumeName represents the name of the persistent volume to attach." },
	{ "Node", "string", "", 0,
		"nodeName represents the node that the volume should be attached to." },
	{ "Attached", "boolean", "", 0,
		"attached indicates the volume is successfully attached. This field must "
		"only be set by the entity completing the attach operation, i.e. the "
		"external-attacher." },
	COLUMN_AGE,
};

static void volumeattachment_cells(struct row *r, json_t *va) {
	json_t *spec = json_object_get(va, "spec");
	cell_str(r, obj_name(va));
	cell_str(r, str(spec, "attacher"));
	cell_str(r, str(json_object_get(spec, "source"), "persistentVolumeName"));
	cell_str(r, str(spec, "nodeName"));
	cell_bool(r, json_is_true(at(va, "status", "attached", NULL)));
	cell_created(r, va);
}

const struct kinf_kindcols kindcols_storage[] = {
	KIND("storage.k8s.io", "StorageClass", storageclass_columns, storageclass_cells),
	KIND("storage.k8s.io", "CSIDriver", csidriver_columns, csidriver_cells),
	KIND("storage.k8s.io", "CSINode", csinode_columns, csinode_cells),
	KIND("storage.k8s.io", "VolumeAttachment", volumeattachment_columns,
		volumeattachment_cells),
	DEFAULT_KIND("storage.k8s.io", "CSIStorageCapacity"),
};
const size_t kindcols_n_storage = sizeof(kindcols_storage) / sizeof(*kindcols_storage);
