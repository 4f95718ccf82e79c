/*
 * The cluster's own machinery: rbac, certificates, coordination,
 * scheduling, node, admissionregistration, flowcontrol, apiregistration
 * (the aggregator's APIService) and apiextensions.
 */
#include <string.h>

#include "kindcols_int.h"

/* rbac.authorization.k8s.io RoleBinding */
static const struct kinf_kindcols_column rolebinding_columns[] = {
	COLUMN_NAME,
	{ "Role", "string", "", 0,
		"RoleRef can reference a Role in the current namespace or a ClusterRole in "
		"the global namespace. If the RoleRef cannot be resolved, the Authorizer "
		"must return an error." },
	COLUMN_AGE,
	{ "Users", "string", "", 1,
		"Users in the roleBinding" },
	{ "Groups", "string", "", 1,
		"Groups in the roleBinding" },
	{ "ServiceAccounts", "string", "", 1,
		"ServiceAccounts in the roleBinding" },
};

/* printRoleBinding, printClusterRoleBinding: rbac.SubjectsStrings, joined with ", ". */
static void binding_cells(struct row *r, json_t *rb) {
	static const char *const kinds[] = { "User", "Group", "ServiceAccount" };
	json_t *ref = json_object_get(rb, "roleRef"), *s;
	struct kinf_buf b = {0};
	size_t i;
	cell_str(r, obj_name(rb));
	cell_strf(r, "%s/%s", str(ref, "kind"), str(ref, "name"));
	cell_created(r, rb);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(*kinds); k++) {
		json_array_foreach(json_object_get(rb, "subjects"), i, s) {
			if (strcmp(str(s, "kind"), kinds[k]) != 0) {
				continue;
			}
			kinf_buf_puts(&b, b.len ? ", " : "");
			if (k == 2) {
				kinf_buf_putf(&b, "%s/", str(s, "namespace"));
			}
			kinf_buf_puts(&b, str(s, "name"));
		}
		cell_buf(r, &b, "");
	}
	kinf_buf_release(&b);
}

/* rbac.authorization.k8s.io ClusterRoleBinding */
static const struct kinf_kindcols_column clusterrolebinding_columns[] = {
	COLUMN_NAME,
	{ "Role", "string", "", 0,
		"RoleRef can only reference a ClusterRole in the global namespace. If the "
		"RoleRef cannot be resolved, the Authorizer must return an error." },
	COLUMN_AGE,
	{ "Users", "string", "", 1,
		"Users in the clusterRoleBinding" },
	{ "Groups", "string", "", 1,
		"Groups in the clusterRoleBinding" },
	{ "ServiceAccounts", "string", "", 1,
		"ServiceAccounts in the clusterRoleBinding" },
};

/* certificates.k8s.io CertificateSigningRequest */
static const struct kinf_kindcols_column certificatesigningrequest_columns[] = {
	COLUMN_NAME,
	COLUMN_AGE,
	{ "SignerName", "string", "", 0,
		"Requested signer for the request. It is a qualified name in the form: "
		"`scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a "
		"kubelet client certificate, it is assigned\n    "
		"\"kubernetes.io/kube-apiserver-client-kubelet\".\n 2. If it's a kubelet "
		"serving certificate, it is assigned\n    "
		"\"kubernetes.io/kubelet-serving\".\n 3. Otherwise, it is assigned "
		"\"kubernetes.io/legacy-unknown\".\nDistribution of trust for signers "
		"happens out of band. You can select on this field using `spec.signerName`." },
	{ "Requestor", "string", "", 0,
		"Base64-encoded PKCS#10 CSR data" },
	{ "RequestedDuration", "string", "", 0,
		"expirationSeconds is the requested duration of validity of the issued "
		"certificate. The certificate signer may issue a certificate with a "
		"different validity duration so a client must check the delta between the "
		"notBefore and and notAfter fields in the issued certificate to determine "
		"the actual duration.\n\nThe v1.22+ in-tree implementations of the "
		"well-known Kubernetes signers will honor this field as long as the "
		"requested duration is not greater than the maximum duration they will honor "
		"per the --cluster-signing-duration CLI flag to the Kubernetes controller "
		"manager.\n\nCertificate signers may not honor this field for various "
		"reasons:\n\n  1. Old signer that is unaware of the field (such as the "
		"in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured "
		"maximum is shorter than the requested duration\n  3. Signer whose "
		"configured minimum is longer than the requested duration\n\nThe minimum "
		"valid value for expirationSeconds is 600, i.e. 10 minutes." },
	{ "Condition", "string", "", 0,
		"Conditions applied to the request, such as approval or denial." },
};

/* printCertificateSigningRequest, extractCSRStatus */
static void certificatesigningrequest_cells(struct row *r, json_t *csr) {
	json_t *spec = json_object_get(csr, "spec"), *status = json_object_get(csr, "status"), *c;
	bool approved = false, denied = false, failed = false;
	size_t i;
	cell_str(r, obj_name(csr));
	cell_created(r, csr);
	cell_str(r, str(spec, "signerName")[0] ? str(spec, "signerName") : "<none>");
	cell_str(r, str(spec, "username"));
	if (json_object_get(spec, "expirationSeconds")) {
		char d[32];
		kinf_kindcols_human_duration(num(spec, "expirationSeconds"), d, sizeof(d));
		cell_str(r, d);
	} else {
		cell_str(r, "<none>");
	}
	json_array_foreach(json_object_get(status, "conditions"), i, c) {
		/* by type alone, whatever its status */
		approved = approved || strcmp(str(c, "type"), "Approved") == 0;
		denied = denied || strcmp(str(c, "type"), "Denied") == 0;
		failed = failed || strcmp(str(c, "type"), "Failed") == 0;
	}
	cell_strf(r, "%s%s%s", denied ? "Denied" : approved ? "Approved" : "Pending",
			failed ? ",Failed" : "", str(status, "certificate")[0] ? ",Issued" : "");
}

/* coordination.k8s.io Lease */
static const struct kinf_kindcols_column lease_columns[] = {
	COLUMN_NAME,
	{ "Holder", "string", "", 0,
		"holderIdentity contains the identity of the holder of a current lease." },
	COLUMN_AGE,
};

static void lease_cells(struct row *r, json_t *l) {
	cell_str(r, obj_name(l));
	cell_str(r, str(json_object_get(l, "spec"), "holderIdentity"));
	cell_created(r, l);
}

/* scheduling.k8s.io PriorityClass */
static const struct kinf_kindcols_column priorityclass_columns[] = {
	COLUMN_NAME,
	{ "Value", "integer", "", 0,
		"value represents the integer value of this priority class. This is the "
		"actual priority that pods receive when they have the name of this class in "
		"their pod spec." },
	{ "Global-Default", "boolean", "", 0,
		"globalDefault specifies whether this PriorityClass should be considered as "
		"the default priority for pods that do not have any priority class. Only one "
		"PriorityClass can be marked as `globalDefault`. However, if more than one "
		"PriorityClasses exists with their `globalDefault` field set to true, the "
		"smallest value of such global default PriorityClasses will be used as the "
		"default priority." },
	COLUMN_AGE,
};

static void priorityclass_cells(struct row *r, json_t *pc) {
	cell_str(r, obj_name(pc));
	cell_int(r, num(pc, "value"));
	cell_bool(r, json_is_true(json_object_get(pc, "globalDefault")));
	cell_created(r, pc);
}

/* node.k8s.io RuntimeClass */
static const struct kinf_kindcols_column runtimeclass_columns[] = {
	COLUMN_NAME,
	{ "Handler", "string", "", 0,
		"" },
	COLUMN_AGE,
};

static void runtimeclass_cells(struct row *r, json_t *rc) {
	cell_str(r, obj_name(rc));
	cell_str(r, str(rc, "handler"));
	cell_created(r, rc);
}

/* admissionregistration.k8s.io Mutating- and ValidatingWebhookConfiguration */
static const struct kinf_kindcols_column webhookconfiguration_columns[] = {
	COLUMN_NAME,
	{ "Webhooks", "integer", "", 0,
		"Webhooks indicates the number of webhooks registered in this configuration" },
	COLUMN_AGE,
};

/* printMutatingWebhook, printValidatingWebhook */
static void webhook_cells(struct row *r, json_t *w) {
	cell_str(r, obj_name(w));
	cell_int(r, (long long)json_array_size(json_object_get(w, "webhooks")));
	cell_created(r, w);
}

/* flowcontrol.apiserver.k8s.io FlowSchema */
static const struct kinf_kindcols_column flowschema_columns[] = {
	COLUMN_NAME,
	{ "PriorityLevel", "string", "", 0,
		"`name` is the name of the priority level configuration being referenced "
		"Required." },
	{ "MatchingPrecedence", "string", "", 0,
		"`matchingPrecedence` is used to choose among the FlowSchemas that match a "
		"given request. The chosen FlowSchema is among those with the numerically "
		"lowest (which we take to be logically highest) MatchingPrecedence.  Each "
		"MatchingPrecedence value must be ranged in [1,10000]. Note that if the "
		"precedence is not specified, it will be set to 1000 as default." },
	{ "DistinguisherMethod", "string", "", 0,
		"`distinguisherMethod` defines how to compute the flow distinguisher for "
		"requests that match this schema. `nil` specifies that the distinguisher is "
		"disabled and thus will always be the empty string." },
	COLUMN_AGE,
	{ "MissingPL", "string", "", 0,
		"references a broken or non-existent PriorityLevelConfiguration" },
};

/* printFlowSchemaList's order (FlowSchemaSequence): by matchingPrecedence, then name. */
static long long flowschema_order(json_t *fs) {
	return num(json_object_get(fs, "spec"), "matchingPrecedence");
}

/* printFlowSchema: MissingPL is the Dangling condition's status, "?" without one. */
static void flowschema_cells(struct row *r, json_t *fs) {
	json_t *spec = json_object_get(fs, "spec"), *c, *dangling = NULL;
	json_t *method = json_object_get(spec, "distinguisherMethod");
	size_t i;
	json_array_foreach(at(fs, "status", "conditions", NULL), i, c) {
		if (strcmp(str(c, "type"), "Dangling") == 0) {
			dangling = c;
			break;
		}
	}
	cell_str(r, obj_name(fs));
	cell_str(r, str(json_object_get(spec, "priorityLevelConfiguration"), "name"));
	cell_int(r, num(spec, "matchingPrecedence"));
	cell_str(r, json_is_object(method) ? str(method, "type") : "<none>");
	cell_created(r, fs);
	cell_str(r, dangling ? str(dangling, "status") : "?");
}

/* flowcontrol.apiserver.k8s.io PriorityLevelConfiguration */
static const struct kinf_kindcols_column prioritylevelconfiguration_columns[] = {
	COLUMN_NAME,
	{ "Type", "string", "", 0,
		"`type` indicates whether this priority level is subject to limitation on "
		"request execution.  A value of `\"Exempt\"` means that requests of this "
		"priority level are not subject to a limit (and thus are never queued) and "
		"do not detract from the capacity made available to other priority levels.  "
		"A value of `\"Limited\"` means that (a) requests of this priority level "
		"_are_ subject to limits and (b) some of the server's limited capacity is "
		"made available exclusively to this priority level. Required." },
	{ "NominalConcurrencyShares", "string", "", 0,
		"`nominalConcurrencyShares` (NCS) contributes to the computation of the "
		"NominalConcurrencyLimit (NominalCL) of this level. This is the number of "
		"execution seats available at this priority level. This is used both for "
		"requests dispatched from this priority level as well as requests dispatched "
		"from other priority levels borrowing seats from this level. The server's "
		"concurrency limit (ServerCL) is divided among the Limited priority levels "
		"in proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * "
		"NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers "
		"mean a larger nominal concurrency limit, at the expense of every other "
		"priority level. This field has a default value of 30." },
	{ "Queues", "string", "", 0,
		"`queues` is the number of queues for this priority level. The queues exist "
		"independently at each apiserver. The value must be positive.  Setting it to "
		"1 effectively precludes shufflesharding and thus makes the distinguisher "
		"method of associated flow schemas irrelevant.  This field has a default "
		"value of 64." },
	{ "HandSize", "string", "", 0,
		"`handSize` is a small positive number that configures the shuffle sharding "
		"of requests into queues.  When enqueuing a request at this priority level "
		"the request's flow identifier (a string pair) is hashed and the hash value "
		"is used to shuffle the list of queues and deal a hand of the size specified "
		"here.  The request is put into one of the shortest queues in that hand. "
		"`handSize` must be no larger than `queues`, and should be significantly "
		"smaller (so that a few heavy flows do not saturate most of the queues).  "
		"See the user-facing documentation for more extensive guidance on setting "
		"this field.  This field has a default value of 8." },
	{ "QueueLengthLimit", "string", "", 0,
		"`queueLengthLimit` is the maximum number of requests allowed to be waiting "
		"in a given queue of this priority level at a time; excess requests are "
		"rejected.  This value must be positive.  If not specified, it will be "
		"defaulted to 50." },
	COLUMN_AGE,
};

/* An integer cell, or "<none>" when its owner is not set. */
static void int_or_none(struct row *r, json_t *owner, const char *key) {
	if (json_is_object(owner)) {
		cell_int(r, num(owner, key));
	} else {
		cell_str(r, "<none>");
	}
}

/* printPriorityLevelConfiguration (v1beta2's assuredConcurrencyShares is the same field) */
static void prioritylevelconfiguration_cells(struct row *r, json_t *plc) {
	json_t *spec = json_object_get(plc, "spec"), *limited = json_object_get(spec, "limited");
	json_t *queuing = at(limited, "limitResponse", "queuing", NULL);
	cell_str(r, obj_name(plc));
	cell_str(r, str(spec, "type"));
	int_or_none(r, limited, json_object_get(limited, "nominalConcurrencyShares") ?
			"nominalConcurrencyShares" : "assuredConcurrencyShares");
	int_or_none(r, queuing, "queues");
	int_or_none(r, queuing, "handSize");
	int_or_none(r, queuing, "queueLengthLimit");
	cell_created(r, plc);
}

/* apiregistration.k8s.io APIService */
static const struct kinf_kindcols_column apiservice_columns[] = {
	COLUMN_NAME,
	{ "Service", "string", "", 0,
		"The reference to the service that hosts this API endpoint." },
	{ "Available", "string", "", 0,
		"Whether this service is available." },
	COLUMN_AGE,
};

/* kube-aggregator's APIService table: its service, and its Available condition. */
static void apiservice_cells(struct row *r, json_t *as) {
	json_t *svc = at(as, "spec", "service", NULL), *c, *available = NULL;
	size_t i;
	json_array_foreach(at(as, "status", "conditions", NULL), i, c) {
		if (strcmp(str(c, "type"), "Available") == 0) {
			available = c;
			break;
		}
	}
	cell_str(r, obj_name(as));
	if (json_is_object(svc)) {
		cell_strf(r, "%s/%s", str(svc, "namespace"), str(svc, "name"));
	} else {
		cell_str(r, "Local");
	}
	if (!available) {
		cell_str(r, "Unknown");
	} else if (strcmp(str(available, "status"), "True") != 0 && str(available, "reason")[0]) {
		cell_strf(r, "%s (%s)", str(available, "status"), str(available, "reason"));
	} else {
		cell_str(r, str(available, "status"));
	}
	cell_created(r, as);
}

const struct kinf_kindcols kindcols_control[] = {
	DEFAULT_KIND("rbac.authorization.k8s.io", "Role"),
	KIND("rbac.authorization.k8s.io", "RoleBinding", rolebinding_columns, binding_cells),
	DEFAULT_KIND("rbac.authorization.k8s.io", "ClusterRole"),
	KIND("rbac.authorization.k8s.io", "ClusterRoleBinding", clusterrolebinding_columns,
		binding_cells),
	KIND("certificates.k8s.io", "CertificateSigningRequest",
		certificatesigningrequest_columns, certificatesigningrequest_cells),
	KIND("coordination.k8s.io", "Lease", lease_columns, lease_cells),
	KIND("scheduling.k8s.io", "PriorityClass", priorityclass_columns, priorityclass_cells),
	KIND("node.k8s.io", "RuntimeClass", runtimeclass_columns, runtimeclass_cells),
	KIND("admissionregistration.k8s.io", "MutatingWebhookConfiguration",
		webhookconfiguration_columns, webhook_cells),
	KIND("admissionregistration.k8s.io", "ValidatingWebhookConfiguration",
		webhookconfiguration_columns, webhook_cells),
	{ .group = "flowcontrol.apiserver.k8s.io", .kind = "FlowSchema",
		.cols = flowschema_columns,
		.n_cols = sizeof(flowschema_columns) / sizeof(*flowschema_columns),
		.cells = flowschema_cells, .row_order = flowschema_order },
	KIND("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration",
		prioritylevelconfiguration_columns, prioritylevelconfiguration_cells),
	KIND("apiregistration.k8s.io", "APIService", apiservice_columns, apiservice_cells),
	DEFAULT_KIND("apiextensions.k8s.io", "CustomResourceDefinition"),
};
const size_t kindcols_n_control = sizeof(kindcols_control) / sizeof(*kindcols_control);
