/*
 * core/v1's kinds, and events.k8s.io/v1's Event (the apiserver converts it
 * to core's and prints it alike).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "kindcols_int.h"
#include "rfc3339.h"

/* A resource.Quantity's String() in a map of them: stored ones are canonical; none is "0". */
static const char *quantity(json_t *map, const char *name) {
	json_t *q = json_object_get(map, name);
	return json_is_string(q) ? json_string_value(q) : "0";
}

/* helper.GetAccessModesAsString: RWO, ROX, RWX, RWOP in that order, each once. */
static void access_modes(json_t *modes, struct kinf_buf *out) {
	static const char *const names[][2] = {
		{ "ReadWriteOnce", "RWO" }, { "ReadOnlyMany", "ROX" },
		{ "ReadWriteMany", "RWX" }, { "ReadWriteOncePod", "RWOP" },
	};
	for (size_t n = 0; n < sizeof(names) / sizeof(*names); n++) {
		size_t i;
		json_t *m;
		json_array_foreach(modes, i, m) {
			const char *mode = json_string_value(m);
			if (mode && strcmp(mode, names[n][0]) == 0) {
				kinf_buf_putf(out, "%s%s", out->len ? "," : "", names[n][1]);
				break;
			}
		}
	}
}

/* The beta storage-class annotation when it is there at all (GetPersistentVolume(Claim)Class). */
static json_t *class_annotation(json_t *obj) {
	return at(obj, "metadata", "annotations", "volume.beta.kubernetes.io/storage-class", NULL);
}

/* core/v1 Pod */
static const struct kinf_kindcols_column pod_columns[] = {
	COLUMN_NAME,
	{ "Ready", "string", "", 0,
		"The aggregate readiness state of this pod for accepting traffic." },
	{ "Status", "string", "", 0,
		"The aggregate status of the containers in this pod." },
	{ "Restarts", "string", "", 0,
		"The number of times the containers in this pod have been restarted and when "
		"the last container in this pod has restarted." },
	COLUMN_AGE,
	{ "IP", "string", "", 1,
		"podIP address allocated to the pod. Routable at least within the cluster. "
		"Empty if not yet allocated." },
	{ "Node", "string", "", 1,
		"NodeName is a request to schedule this pod onto a specific node. If it is "
		"non-empty, the scheduler simply schedules this pod onto that node, assuming "
		"that it fits resource requirements." },
	{ "Nominated Node", "string", "", 1,
		"nominatedNodeName is set only when this pod preempts other pods on the "
		"node, but it cannot be scheduled right away as preemption victims receive "
		"their graceful termination periods. This field does not guarantee that the "
		"pod will be scheduled on this node. Scheduler may decide to place the pod "
		"elsewhere if other nodes become available sooner. Scheduler may also decide "
		"to give the resources on this node to a higher priority pod that is created "
		"after preemption. As a result, this field may be different than "
		"PodSpec.nodeName when the pod is scheduled." },
	{ "Readiness Gates", "string", "", 1,
		"If specified, all readiness gates will be evaluated for pod readiness. A "
		"pod is ready when all its containers are ready AND all conditions specified "
		"in the readiness gates have status equal to \"True\" More info: "
		"https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates" },
};

static const char succeeded_condition[] = "[{\"type\":\"Completed\",\"status\":\"True\","
	"\"reason\":\"Succeeded\",\"message\":\"The pod has completed successfully.\"}]";
static const char failed_condition[] = "[{\"type\":\"Completed\",\"status\":\"True\","
	"\"reason\":\"Failed\",\"message\":\"The pod failed.\"}]";

/* The latest lastState.terminated.finishedAt: Go's zero Time until one is seen. */
struct last_restart {
	struct timespec t;
	bool set;
};

static void note_restart(struct last_restart *l, json_t *status) {
	json_t *term = at(status, "lastState", "terminated", NULL);
	const char *f = json_string_value(json_object_get(term, "finishedAt"));
	struct timespec t;
	if (f && kinf_rfc3339_parse(f, &t) == 0 && (!l->set || t.tv_sec > l->t.tv_sec ||
			(t.tv_sec == l->t.tv_sec && t.tv_nsec > l->t.tv_nsec))) {
		l->t = t;
		l->set = true;
	}
}

/* isRestartableInitContainer: an init container (a sidecar) with restartPolicy Always. */
static bool restartable(json_t *inits, const char *name) {
	size_t i;
	json_t *c;
	json_array_foreach(inits, i, c) {
		if (strcmp(str(c, "name"), name) == 0) {
			return strcmp(str(c, "restartPolicy"), "Always") == 0;
		}
	}
	return false;
}

/*
 * Whether a condition of type is True: the first one of it (first_only,
 * isPodInitializedConditionTrue), or any (hasPodReadyCondition).
 */
static bool condition_true(json_t *status, const char *type, bool first_only) {
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(status, "conditions"), i, c) {
		if (strcmp(str(c, "type"), type) == 0) {
			if (strcmp(str(c, "status"), "True") == 0) {
				return true;
			}
			if (first_only) {
				return false;
			}
		}
	}
	return false;
}

/* The reason of an init container that holds the pod up (the i-th of n_inits). */
static void init_reason(json_t *cs, size_t i, size_t n_inits, struct kinf_buf *reason) {
	json_t *term = at(cs, "state", "terminated", NULL);
	const char *waiting = str(at(cs, "state", "waiting", NULL), "reason");
	kinf_buf_reset(reason);
	if (term && str(term, "reason")[0]) {
		kinf_buf_putf(reason, "Init:%s", str(term, "reason"));
	} else if (term && num(term, "signal")) {
		kinf_buf_putf(reason, "Init:Signal:%lld", num(term, "signal"));
	} else if (term) {
		kinf_buf_putf(reason, "Init:ExitCode:%lld", num(term, "exitCode"));
	} else if (waiting[0] && strcmp(waiting, "PodInitializing") != 0) {
		kinf_buf_putf(reason, "Init:%s", waiting);
	} else {
		kinf_buf_putf(reason, "Init:%zu/%zu", i, n_inits);
	}
}

/* printPod */
static void pod_cells(struct row *r, json_t *pod) {
	json_t *spec = json_object_get(pod, "spec"), *status = json_object_get(pod, "status");
	json_t *inits = json_object_get(spec, "initContainers");
	json_t *cs;
	struct last_restart last = {0}, sidecar_last = {0};
	struct kinf_buf reason = {0};
	long long restarts = 0, sidecar_restarts = 0;
	size_t total = json_array_size(json_object_get(spec, "containers")), ready = 0, i;
	bool initializing = false;

	kinf_buf_puts(&reason, str(status, "reason")[0] ? str(status, "reason") :
			str(status, "phase"));
	json_array_foreach(json_object_get(status, "conditions"), i, cs) {
		if (strcmp(str(cs, "type"), "PodScheduled") == 0 &&
				strcmp(str(cs, "reason"), "SchedulingGated") == 0) {
			kinf_buf_reset(&reason);
			kinf_buf_puts(&reason, "SchedulingGated");
		}
	}
	if (strcmp(str(status, "phase"), "Succeeded") == 0) {
		r->conditions = succeeded_condition;
	} else if (strcmp(str(status, "phase"), "Failed") == 0) {
		r->conditions = failed_condition;
	}
	json_array_foreach(inits, i, cs) {
		total += restartable(inits, str(cs, "name"));
	}
	json_array_foreach(json_object_get(status, "initContainerStatuses"), i, cs) {
		bool sidecar = restartable(inits, str(cs, "name"));
		json_t *term = at(cs, "state", "terminated", NULL);
		restarts += num(cs, "restartCount");
		note_restart(&last, cs);
		if (sidecar) {
			sidecar_restarts += num(cs, "restartCount");
			note_restart(&sidecar_last, cs);
		}
		if (term && num(term, "exitCode") == 0) {
			continue;
		}
		if (sidecar && json_is_true(json_object_get(cs, "started"))) {
			ready += json_is_true(json_object_get(cs, "ready"));
			continue;
		}
		init_reason(cs, i, json_array_size(inits), &reason);
		initializing = true;
		break;
	}
	if (!initializing || condition_true(status, "Initialized", true)) {
		json_t *statuses = json_object_get(status, "containerStatuses");
		bool has_running = false;
		restarts = sidecar_restarts;
		last = sidecar_last;
		for (i = json_array_size(statuses); i-- > 0;) {
			cs = json_array_get(statuses, i);
			json_t *term = at(cs, "state", "terminated", NULL);
			const char *waiting = str(at(cs, "state", "waiting", NULL), "reason");
			restarts += num(cs, "restartCount");
			note_restart(&last, cs);
			if (waiting[0] || (term && str(term, "reason")[0])) {
				kinf_buf_reset(&reason);
				kinf_buf_puts(&reason, waiting[0] ? waiting : str(term, "reason"));
			} else if (term) {
				kinf_buf_reset(&reason);
				if (num(term, "signal")) {
					kinf_buf_putf(&reason, "Signal:%lld", num(term, "signal"));
				} else {
					kinf_buf_putf(&reason, "ExitCode:%lld",
							num(term, "exitCode"));
				}
			} else if (json_is_true(json_object_get(cs, "ready")) &&
					at(cs, "state", "running", NULL)) {
				has_running = true;
				ready++;
			}
		}
		if (reason.data && strcmp(reason.data, "Completed") == 0 && has_running) {
			kinf_buf_reset(&reason);
			kinf_buf_puts(&reason, condition_true(status, "Ready", false) ?
					"Running" : "NotReady");
		}
	}
	if (at(pod, "metadata", "deletionTimestamp", NULL)) {
		kinf_buf_reset(&reason);
		kinf_buf_puts(&reason, strcmp(str(status, "reason"), "NodeLost") == 0 ?
				"Unknown" : "Terminating");
	}

	cell_str(r, obj_name(pod));
	cell_strf(r, "%zu/%zu", ready, total);
	cell_buf(r, &reason, "");
	if (restarts != 0 && last.set) {
		char age[32];
		long long ns = ((long long)r->now.tv_sec - (long long)last.t.tv_sec) *
			1000000000LL + ((long long)r->now.tv_nsec - (long long)last.t.tv_nsec);
		kinf_kindcols_human_duration(ns / 1000000000LL, age, sizeof(age));
		cell_strf(r, "%lld (%s ago)", restarts, age);
	} else {
		cell_strf(r, "%lld", restarts);
	}
	cell_created(r, pod);

	const char *ip = str(json_array_get(json_object_get(status, "podIPs"), 0), "ip");
	cell_str(r, ip[0] ? ip : "<none>");
	cell_str(r, str(spec, "nodeName")[0] ? str(spec, "nodeName") : "<none>");
	cell_str(r, str(status, "nominatedNodeName")[0] ? str(status, "nominatedNodeName") :
			"<none>");
	json_t *gates = json_object_get(spec, "readinessGates");
	if (json_array_size(gates) == 0) {
		cell_str(r, "<none>");
	} else {
		size_t met = 0;
		json_array_foreach(gates, i, cs) {
			size_t j;
			json_t *c;
			json_array_foreach(json_object_get(status, "conditions"), j, c) {
				if (strcmp(str(c, "type"), str(cs, "conditionType")) == 0) {
					met += strcmp(str(c, "status"), "True") == 0;
					break;
				}
			}
		}
		cell_strf(r, "%zu/%zu", met, json_array_size(gates));
	}
	kinf_buf_release(&reason);
}

/* core/v1 ReplicationController */
static const struct kinf_kindcols_column replicationcontroller_columns[] = {
	COLUMN_NAME,
	{ "Desired", "integer", "", 0,
		"Replicas is the number of desired replicas. This is a pointer to "
		"distinguish between explicit zero and unspecified. Defaults to 1. More "
		"info: "
		"https://kubernetes.io/docs/concepts/workloads/controllers/replicationc"
		"ontroller#what-is-a-replicationcontroller" },
	{ "Current", "integer", "", 0,
		"Replicas is the most recently observed number of replicas. More info: "
		"https://kubernetes.io/docs/concepts/workloads/controllers/replicationc"
		"ontroller#what-is-a-replicationcontroller" },
	{ "Ready", "integer", "", 0,
		"The number of ready replicas for this replication controller." },
	COLUMN_AGE,
	COLUMN_CONTAINERS(1),
	COLUMN_IMAGES(1),
	{ "Selector", "string", "", 1,
		"Selector is a label query over pods that should match the Replicas count. "
		"If Selector is empty, it is defaulted to the labels present on the Pod "
		"template. Label keys and values that must match in order to be controlled "
		"by this replication controller, if empty defaulted to labels on Pod "
		"template. More info: "
		"https://kubernetes.io/docs/concepts/overview/working-with-objects/labe"
		"ls/#label-selectors" },
};

static void replicationcontroller_cells(struct row *r, json_t *o) {
	json_t *spec = json_object_get(o, "spec"), *status = json_object_get(o, "status");
	struct kinf_buf b = {0};
	cell_str(r, obj_name(o));
	cell_int(r, num(spec, "replicas"));
	cell_int(r, num(status, "replicas"));
	cell_int(r, num(status, "readyReplicas"));
	cell_created(r, o);
	cell_containers(r, at(spec, "template", "spec", "containers", NULL));
	format_labels(json_object_get(spec, "selector"), &b);
	cell_buf(r, &b, "");
	kinf_buf_release(&b);
}

/* core/v1 Service */
static const struct kinf_kindcols_column service_columns[] = {
	COLUMN_NAME,
	{ "Type", "string", "", 0,
		"type determines how the Service is exposed. Defaults to ClusterIP. Valid "
		"options are ExternalName, ClusterIP, NodePort, and LoadBalancer. "
		"\"ClusterIP\" allocates a cluster-internal IP address for load-balancing to "
		"endpoints. Endpoints are determined by the selector or if that is not "
		"specified, by manual construction of an Endpoints object or EndpointSlice "
		"objects. If clusterIP is \"None\", no virtual IP is allocated and the "
		"endpoints are published as a set of endpoints rather than a virtual IP. "
		"\"NodePort\" builds on ClusterIP and allocates a port on every node which "
		"routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on "
		"NodePort and creates an external load-balancer (if supported in the current "
		"cloud) which routes to the same endpoints as the clusterIP. "
		"\"ExternalName\" aliases this service to the specified externalName. "
		"Several other fields do not apply to ExternalName services. More info: "
		"https://kubernetes.io/docs/concepts/services-networking/service/#publi"
		"shing-services-service-types" },
	{ "Cluster-IP", "string", "", 0,
		"clusterIP is the IP address of the service and is usually assigned "
		"randomly. If an address is specified manually, is in-range (as per system "
		"configuration), and is not in use, it will be allocated to the service; "
		"otherwise creation of the service will fail. This field may not be changed "
		"through updates unless the type field is also being changed to ExternalName "
		"(which requires this field to be blank) or the type field is being changed "
		"from ExternalName (in which case this field may optionally be specified, as "
		"describe above).  Valid values are \"None\", empty string (\"\"), or a "
		"valid IP address. Setting this to \"None\" makes a \"headless service\" (no "
		"virtual IP), which is useful when direct endpoint connections are preferred "
		"and proxying is not required.  Only applies to types ClusterIP, NodePort, "
		"and LoadBalancer. If this field is specified when creating a Service of "
		"type ExternalName, creation will fail. This field will be wiped when "
		"updating a Service to type ExternalName. More info: "
		"https://kubernetes.io/docs/concepts/services-networking/service/#virtu"
		"al-ips-and-service-proxies" },
	{ "External-IP", "string", "", 0,
		"externalIPs is a list of IP addresses for which nodes in the cluster will "
		"also accept traffic for this service.  These IPs are not managed by "
		"Kubernetes.  The user is responsible for ensuring that traffic arrives at a "
		"node with this IP.  A common example is external load-balancers that are "
		"not part of the Kubernetes system." },
	{ "Port(s)", "string", "", 0,
		"The list of ports that are exposed by this service. More info: "
		"https://kubernetes.io/docs/concepts/services-networking/service/#virtu"
		"al-ips-and-service-proxies" },
	COLUMN_AGE,
	{ "Selector", "string", "", 1,
		"Route service traffic to pods with label keys and values matching this "
		"selector. If empty or not present, the service is assumed to have an "
		"external process managing its endpoints, which Kubernetes will not modify. "
		"Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if "
		"type is ExternalName. More info: "
		"https://kubernetes.io/docs/concepts/services-networking/service/" },
};

/* A string array joined with sep. */
static void join(json_t *list, const char *sep, struct kinf_buf *out) {
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v) {
		const char *s = json_string_value(v);
		kinf_buf_putf(out, "%s%s", i ? sep : "", s ? s : "");
	}
}

/* getServiceExternalIP, wide */
static void service_external_ip(json_t *svc, struct kinf_buf *out) {
	json_t *spec = json_object_get(svc, "spec");
	json_t *external = json_object_get(spec, "externalIPs");
	const char *type = str(spec, "type");
	if (strcmp(type, "ClusterIP") == 0 || strcmp(type, "NodePort") == 0) {
		join(external, ",", out);
		if (!out->len) {
			kinf_buf_puts(out, "<none>");
		}
	} else if (strcmp(type, "LoadBalancer") == 0) {
		load_balancer_ingress(at(svc, "status", "loadBalancer", "ingress", NULL), out);
		if (json_array_size(external)) {
			kinf_buf_puts(out, out->len ? "," : "");
			join(external, ",", out);
		} else if (!out->len) {
			kinf_buf_puts(out, "<pending>");
		}
	} else if (strcmp(type, "ExternalName") == 0) {
		kinf_buf_puts(out, str(spec, "externalName"));
	} else {
		kinf_buf_puts(out, "<unknown>");
	}
}

/* printService */
static void service_cells(struct row *r, json_t *svc) {
	json_t *spec = json_object_get(svc, "spec");
	const char *cluster_ip = json_string_value(json_array_get(json_object_get(spec,
			"clusterIPs"), 0));
	struct kinf_buf b = {0};
	size_t i;
	json_t *p;
	cell_str(r, obj_name(svc));
	cell_str(r, str(spec, "type"));
	cell_str(r, json_array_size(json_object_get(spec, "clusterIPs")) ?
			(cluster_ip ? cluster_ip : "") : "<none>");
	service_external_ip(svc, &b);
	cell_buf(r, &b, "");
	json_array_foreach(json_object_get(spec, "ports"), i, p) {
		kinf_buf_putf(&b, "%s%lld", i ? "," : "", num(p, "port"));
		if (num(p, "nodePort") > 0) {
			kinf_buf_putf(&b, ":%lld", num(p, "nodePort"));
		}
		kinf_buf_putf(&b, "/%s", str(p, "protocol"));
	}
	cell_buf(r, &b, "<none>");
	cell_created(r, svc);
	format_labels(json_object_get(spec, "selector"), &b);
	cell_buf(r, &b, "");
	kinf_buf_release(&b);
}

/* core/v1 Endpoints */
static const struct kinf_kindcols_column endpoints_columns[] = {
	COLUMN_NAME,
	{ "Endpoints", "string", "", 0,
		"The set of all endpoints is the union of all subsets. Addresses are placed "
		"into subsets according to the IPs they share. A single address with "
		"multiple ports, some of which are ready and some of which are not (because "
		"they come from different containers) will result in the address being "
		"displayed in different subsets for the different ports. No address will "
		"appear in both Addresses and NotReadyAddresses in the same subset. Sets of "
		"addresses and ports that comprise a service." },
	COLUMN_AGE,
};

/* net.JoinHostPort */
static void host_port(struct kinf_buf *b, const char *ip, long long port) {
	kinf_buf_putf(b, strchr(ip, ':') ? "[%s]:%lld" : "%s:%lld", ip, port);
}

/* printEndpoints: formatEndpoints(endpoints, nil) */
static void endpoints_cells(struct row *r, json_t *ep) {
	json_t *subsets = json_object_get(ep, "subsets"), *ss;
	struct list_more l = { .max = 3 };
	struct kinf_buf item = {0};
	size_t i;
	cell_str(r, obj_name(ep));
	json_array_foreach(subsets, i, ss) {
		json_t *ports = json_object_get(ss, "ports");
		json_t *addrs = json_object_get(ss, "addresses");
		json_t *a, *p;
		size_t j, k;
		if (json_array_size(ports) == 0) {
			/* A headless service without ports: the addresses alone. */
			json_array_foreach(addrs, j, a) {
				list_more_add(&l, str(a, "ip"));
			}
			continue;
		}
		json_array_foreach(ports, k, p) {
			json_array_foreach(addrs, j, a) {
				kinf_buf_reset(&item);
				host_port(&item, str(a, "ip"), num(p, "port"));
				list_more_add(&l, item.data ? item.data : "");
			}
		}
	}
	if (json_array_size(subsets) == 0) {
		kinf_buf_release(&l.text);
		cell_str(r, "<none>");
	} else {
		cell_list_more(r, &l, "");
	}
	cell_created(r, ep);
	kinf_buf_release(&item);
}

/* core/v1 Node */
static const struct kinf_kindcols_column node_columns[] = {
	COLUMN_NAME,
	{ "Status", "string", "", 0,
		"The status of the node" },
	{ "Roles", "string", "", 0,
		"The roles of the node" },
	COLUMN_AGE,
	{ "Version", "string", "", 0,
		"Kubelet Version reported by the node." },
	{ "Internal-IP", "string", "", 1,
		"List of addresses reachable to the node. Queried from cloud provider, if "
		"available. More info: "
		"https://kubernetes.io/docs/concepts/nodes/node/#addresses Note: This field "
		"is declared as mergeable, but the merge key is not sufficiently unique, "
		"which can cause data corruption when it is merged. Callers should instead "
		"use a full-replacement patch. See https://pr.k8s.io/79391 for an example. "
		"Consumers should assume that addresses can change during the lifetime of a "
		"Node. However, there are some exceptions where this may not be possible, "
		"such as Pods that inherit a Node's address in its own status or consumers "
		"of the downward API (status.hostIP)." },
	{ "External-IP", "string", "", 1,
		"List of addresses reachable to the node. Queried from cloud provider, if "
		"available. More info: "
		"https://kubernetes.io/docs/concepts/nodes/node/#addresses Note: This field "
		"is declared as mergeable, but the merge key is not sufficiently unique, "
		"which can cause data corruption when it is merged. Callers should instead "
		"use a full-replacement patch. See https://pr.k8s.io/79391 for an example. "
		"Consumers should assume that addresses can change during the lifetime of a "
		"Node. However, there are some exceptions where this may not be possible, "
		"such as Pods that inherit a Node's address in its own status or consumers "
		"of the downward API (status.hostIP)." },
	{ "OS-Image", "string", "", 1,
		"OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 "
		"(wheezy))." },
	{ "Kernel-Version", "string", "", 1,
		"Kernel Version reported by the node from 'uname -r' (e.g. "
		"3.16.0-0.bpo.4-amd64)." },
	{ "Container-Runtime", "string", "", 1,
		"ContainerRuntime Version reported by the node through runtime remote API "
		"(e.g. containerd://1.4.2)." },
};

/* findNodeRoles: node-role.kubernetes.io/ROLE labels, and kubernetes.io/role's value. */
static void node_roles(json_t *labels, struct kinf_buf *out) {
	static const char prefix[] = "node-role.kubernetes.io/";
	struct kinf_strv roles = {0};
	const char *key;
	json_t *v;
	json_object_foreach(labels, key, v) {
		const char *value = json_string_value(v) ? json_string_value(v) : "";
		if (strncmp(key, prefix, sizeof(prefix) - 1) == 0) {
			if (key[sizeof(prefix) - 1]) {
				kinf_strv_put_str(&roles, key + sizeof(prefix) - 1);
			}
		} else if (strcmp(key, "kubernetes.io/role") == 0 && value[0]) {
			kinf_strv_put_str(&roles, value);
		}
	}
	kinf_strv_sort_unique(&roles);
	for (size_t i = 0; i < roles.n; i++) {
		kinf_buf_putf(out, "%s%s", i ? "," : "", roles.v[i]);
	}
	if (kinf_strv_error(&roles)) {
		kinf_buf_fail(out, kinf_strv_error(&roles));
	}
	kinf_strv_release(&roles);
}

/* The first address of type (getNodeInternalIP, getNodeExternalIP). */
static const char *node_address(json_t *status, const char *type) {
	size_t i;
	json_t *a;
	json_array_foreach(json_object_get(status, "addresses"), i, a) {
		if (strcmp(str(a, "type"), type) == 0) {
			return str(a, "address");
		}
	}
	return "<none>";
}

/* printNode */
static void node_cells(struct row *r, json_t *node) {
	json_t *status = json_object_get(node, "status"), *info, *c;
	const char *ready = NULL;
	struct kinf_buf b = {0};
	size_t i;
	json_array_foreach(json_object_get(status, "conditions"), i, c) {
		if (strcmp(str(c, "type"), "Ready") == 0) {
			/* the last of that type, as a map of them keeps it */
			ready = strcmp(str(c, "status"), "True") == 0 ? "Ready" : "NotReady";
		}
	}
	kinf_buf_puts(&b, ready ? ready : "Unknown");
	if (json_is_true(at(node, "spec", "unschedulable", NULL))) {
		kinf_buf_puts(&b, ",SchedulingDisabled");
	}
	cell_str(r, obj_name(node));
	cell_buf(r, &b, "");
	node_roles(at(node, "metadata", "labels", NULL), &b);
	cell_buf(r, &b, "<none>");
	cell_created(r, node);
	info = json_object_get(status, "nodeInfo");
	cell_str(r, str(info, "kubeletVersion"));
	cell_str(r, node_address(status, "InternalIP"));
	cell_str(r, node_address(status, "ExternalIP"));
	cell_str(r, str(info, "osImage")[0] ? str(info, "osImage") : "<unknown>");
	cell_str(r, str(info, "kernelVersion")[0] ? str(info, "kernelVersion") : "<unknown>");
	cell_str(r, str(info, "containerRuntimeVersion")[0] ?
			str(info, "containerRuntimeVersion") : "<unknown>");
	kinf_buf_release(&b);
}

/* core/v1 Event */
static const struct kinf_kindcols_column event_columns[] = {
	{ "Last Seen", "string", "", 0,
		"The time at which the most recent occurrence of this event was recorded." },
	{ "Type", "string", "", 0,
		"Type of this event (Normal, Warning), new types could be added in the future" },
	{ "Reason", "string", "", 0,
		"This should be a short, machine understandable string that gives the reason "
		"for the transition into the object's current status." },
	{ "Object", "string", "", 0,
		"The object that this event is about." },
	{ "Subobject", "string", "", 1,
		"If referring to a piece of an object instead of an entire object, this "
		"string should contain a valid JSON/Go field access statement, such as "
		"desiredState.manifest.containers[2]. For example, if the object reference "
		"is to a container within a pod, this would take on a value like: "
		"\"spec.containers{name}\" (where \"name\" refers to the name of the "
		"container that triggered the event) or if no container name is specified "
		"\"spec.containers[2]\" (container with index 2 in this pod). This syntax is "
		"chosen only to have some well-defined way of referencing a part of an "
		"object." },
	{ "Source", "string", "", 1,
		"The component reporting this event. Should be a short machine "
		"understandable string." },
	{ "Message", "string", "", 0,
		"A human-readable description of the status of this operation." },
	{ "First Seen", "string", "", 1,
		"The time at which the event was first recorded. (Time of server receipt is "
		"in TypeMeta.)" },
	{ "Count", "string", "", 1,
		"The number of times this event has occurred." },
	{ "Name", "string", "name", 1,
		DOC_NAME },
};

/* An Event's fields under core/v1's names, or events.k8s.io/v1's. */
struct event_fields {
	const char *involved, *message, *source, *first, *last, *count, *controller;
};

static const struct event_fields core_event = {
	"involvedObject", "message", "source", "firstTimestamp", "lastTimestamp", "count",
	"reportingComponent",
};
static const struct event_fields events_event = {
	"regarding", "note", "deprecatedSource", "deprecatedFirstTimestamp",
	"deprecatedLastTimestamp", "deprecatedCount", "reportingController",
};

/* A metav1.Time or MicroTime that is set (not null, not Go's zero). */
static const char *time_set(json_t *o, const char *key) {
	const char *t = json_string_value(json_object_get(o, key));
	return t && strncmp(t, "0001-01-01T00:00:00", 19) != 0 ? t : NULL;
}

/* strings.TrimSpace, for ASCII white space */
static void trimmed(const char *s, struct kinf_buf *out) {
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1])) {
		n--;
	}
	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	kinf_buf_put(out, s, n);
}

/* printEvent, wide */
static void event_row(struct row *r, json_t *ev, const struct event_fields *f) {
	json_t *inv = json_object_get(ev, f->involved), *series = json_object_get(ev, "series");
	json_t *source = json_object_get(ev, f->source);
	const char *first = time_set(ev, f->first) ? time_set(ev, f->first) :
		time_set(ev, "eventTime");
	const char *last = time_set(ev, f->last) ? time_set(ev, f->last) : first;
	long long count = num(ev, f->count);
	struct kinf_buf b = {0};
	if (json_is_object(series)) {
		last = time_set(series, "lastObservedTime");
		count = num(series, "count");
	} else if (count == 0) {
		count = 1;	/* a singleton event of the new API has none */
	}
	cell_age(r, last);
	cell_str(r, str(ev, "type"));
	cell_str(r, str(ev, "reason"));
	for (const char *k = str(inv, "kind"); *k; k++) {
		kinf_buf_putc(&b, (char)tolower((unsigned char)*k));
	}
	if (str(inv, "name")[0]) {
		kinf_buf_putf(&b, "/%s", str(inv, "name"));
	}
	cell_buf(r, &b, "");
	cell_str(r, str(inv, "fieldPath"));
	/* formatEventSource: the reporting controller and instance when the source has none */
	const char *component = str(source, "component")[0] ? str(source, "component") :
		str(ev, f->controller);
	const char *host = str(source, "host")[0] ? str(source, "host") :
		str(ev, "reportingInstance");
	cell_strf(r, "%s%s%s", component, host[0] ? ", " : "", host);
	trimmed(str(ev, f->message), &b);
	cell_buf(r, &b, "");
	cell_age(r, first);
	cell_int(r, count);
	cell_str(r, obj_name(ev));
	kinf_buf_release(&b);
}

static void event_cells(struct row *r, json_t *ev) {
	event_row(r, ev, &core_event);
}

static void events_event_cells(struct row *r, json_t *ev) {
	event_row(r, ev, &events_event);
}

/* core/v1 Namespace */
static const struct kinf_kindcols_column namespace_columns[] = {
	COLUMN_NAME,
	{ "Status", "string", "", 0,
		"The status of the namespace" },
	COLUMN_AGE,
};

static void namespace_cells(struct row *r, json_t *o) {
	cell_str(r, obj_name(o));
	cell_str(r, str(json_object_get(o, "status"), "phase"));
	cell_created(r, o);
}

/* core/v1 Secret */
static const struct kinf_kindcols_column secret_columns[] = {
	COLUMN_NAME,
	{ "Type", "string", "", 0,
		"Used to facilitate programmatic handling of secret data. More info: "
		"https://kubernetes.io/docs/concepts/configuration/secret/#secret-types" },
	{ "Data", "string", "", 0,
		"Data contains the secret data. Each key must consist of alphanumeric "
		"characters, '-', '_' or '.'. The serialized form of the secret data is a "
		"base64 encoded string, representing the arbitrary (possibly non-string) "
		"data value here. Described in https://tools.ietf.org/html/rfc4648#section-4" },
	COLUMN_AGE,
};

static void secret_cells(struct row *r, json_t *o) {
	cell_str(r, obj_name(o));
	cell_str(r, str(o, "type"));
	cell_int(r, (long long)json_object_size(json_object_get(o, "data")));
	cell_created(r, o);
}

/* core/v1 ServiceAccount */
static const struct kinf_kindcols_column serviceaccount_columns[] = {
	COLUMN_NAME,
	{ "Secrets", "string", "", 0,
		"Secrets is a list of the secrets in the same namespace that pods running "
		"using this ServiceAccount are allowed to use. Pods are only limited to this "
		"list if this service account has a "
		"\"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". "
		"This field should not be used to find auto-generated service account token "
		"secrets for use outside of pods. Instead, tokens can be requested directly "
		"using the TokenRequest API, or service account token secrets can be "
		"manually created. More info: "
		"https://kubernetes.io/docs/concepts/configuration/secret" },
	COLUMN_AGE,
};

static void serviceaccount_cells(struct row *r, json_t *o) {
	cell_str(r, obj_name(o));
	cell_int(r, (long long)json_array_size(json_object_get(o, "secrets")));
	cell_created(r, o);
}

/* core/v1 ConfigMap */
static const struct kinf_kindcols_column configmap_columns[] = {
	COLUMN_NAME,
	{ "Data", "string", "", 0,
		"Data contains the configuration data. Each key must consist of alphanumeric "
		"characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use "
		"the BinaryData field. The keys stored in Data must not overlap with the "
		"keys in the BinaryData field, this is enforced during validation process." },
	COLUMN_AGE,
};

static void configmap_cells(struct row *r, json_t *o) {
	cell_str(r, obj_name(o));
	cell_int(r, (long long)(json_object_size(json_object_get(o, "data")) +
			json_object_size(json_object_get(o, "binaryData"))));
	cell_created(r, o);
}

/* core/v1 PersistentVolume */
static const struct kinf_kindcols_column persistentvolume_columns[] = {
	COLUMN_NAME,
	{ "Capacity", "string", "", 0,
		"capacity is the description of the persistent volume's resources and "
		"capacity. More info: "
		"https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity" },
	{ "Access Modes", "string", "", 0,
		"accessModes contains all ways the volume can be mounted. More info: "
		"https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes" },
	{ "Reclaim Policy", "string", "", 0,
		"persistentVolumeReclaimPolicy defines what happens to a persistent volume "
		"when released from its claim. Valid options are Retain (default for "
		"manually created PersistentVolumes), Delete (default for dynamically "
		"provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be "
		"supported by the volume plugin underlying this PersistentVolume. More info: "
		"https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming" },
	{ "Status", "string", "", 0,
		"phase indicates if a volume is available, bound to a claim, or released by "
		"a claim. More info: "
		"https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase" },
	{ "Claim", "string", "", 0,
		"claimRef is part of a bi-directional binding between PersistentVolume and "
		"PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName "
		"is the authoritative bind between PV and PVC. More info: "
		"https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding" },
	{ "StorageClass", "string", "", 0,
		"StorageClass of the pv" },
	{ "Reason", "string", "", 0,
		"reason is a brief CamelCase string that describes any failure and is meant "
		"for machine parsing and tidy display in the CLI." },
	COLUMN_AGE,
	{ "VolumeMode", "string", "", 1,
		"volumeMode defines if a volume is intended to be used with a formatted "
		"filesystem or to remain in raw block state. Value of Filesystem is implied "
		"when not included in spec." },
};

/* printPersistentVolume */
static void persistentvolume_cells(struct row *r, json_t *pv) {
	json_t *spec = json_object_get(pv, "spec"), *status = json_object_get(pv, "status");
	json_t *claim = json_object_get(spec, "claimRef"), *class = class_annotation(pv);
	struct kinf_buf b = {0};
	cell_str(r, obj_name(pv));
	cell_str(r, quantity(json_object_get(spec, "capacity"), "storage"));
	access_modes(json_object_get(spec, "accessModes"), &b);
	cell_buf(r, &b, "");
	cell_str(r, str(spec, "persistentVolumeReclaimPolicy"));
	cell_str(r, at(pv, "metadata", "deletionTimestamp", NULL) ? "Terminating" :
			str(status, "phase"));
	if (json_is_object(claim)) {
		kinf_buf_putf(&b, "%s/%s", str(claim, "namespace"), str(claim, "name"));
	}
	cell_buf(r, &b, "");
	cell_str(r, class ? json_string_value(class) : str(spec, "storageClassName"));
	cell_str(r, str(status, "reason"));
	cell_created(r, pv);
	cell_str(r, str(spec, "volumeMode")[0] ? str(spec, "volumeMode") : "<unset>");
	kinf_buf_release(&b);
}

/* core/v1 PersistentVolumeClaim */
static const struct kinf_kindcols_column persistentvolumeclaim_columns[] = {
	COLUMN_NAME,
	{ "Status", "string", "", 0,
		"phase represents the current phase of PersistentVolumeClaim." },
	{ "Volume", "string", "", 0,
		"volumeName is the binding reference to the PersistentVolume backing this "
		"claim." },
	{ "Capacity", "string", "", 0,
		"capacity represents the actual resources of the underlying volume." },
	{ "Access Modes", "string", "", 0,
		"accessModes contains the actual access modes the volume backing the PVC "
		"has. More info: "
		"https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1" },
	{ "StorageClass", "string", "", 0,
		"StorageClass of the pvc" },
	COLUMN_AGE,
	{ "VolumeMode", "string", "", 1,
		"volumeMode defines what type of volume is required by the claim. Value of "
		"Filesystem is implied when not included in claim spec." },
};

/* printPersistentVolumeClaim */
static void persistentvolumeclaim_cells(struct row *r, json_t *pvc) {
	json_t *spec = json_object_get(pvc, "spec"), *status = json_object_get(pvc, "status");
	json_t *class = class_annotation(pvc);
	const char *volume = str(spec, "volumeName");
	struct kinf_buf b = {0};
	cell_str(r, obj_name(pvc));
	cell_str(r, at(pvc, "metadata", "deletionTimestamp", NULL) ? "Terminating" :
			str(status, "phase"));
	cell_str(r, volume);
	/* Capacity and access modes are the bound volume's: none before it is bound. */
	cell_str(r, volume[0] ? quantity(json_object_get(status, "capacity"), "storage") : "");
	if (volume[0]) {
		access_modes(json_object_get(status, "accessModes"), &b);
	}
	cell_buf(r, &b, "");
	cell_str(r, class ? json_string_value(class) : str(spec, "storageClassName"));
	cell_created(r, pvc);
	cell_str(r, str(spec, "volumeMode")[0] ? str(spec, "volumeMode") : "<unset>");
	kinf_buf_release(&b);
}

/* core/v1 ResourceQuota */
static const struct kinf_kindcols_column resourcequota_columns[] = {
	COLUMN_NAME,
	COLUMN_AGE,
	{ "Request", "string", "", 0,
		"Request represents a minimum amount of cpu/memory that a container may "
		"consume." },
	{ "Limit", "string", "", 0,
		"Limits control the maximum amount of cpu/memory that a container may use "
		"independent of contention on the node." },
};

/* printResourceQuota: "name: used/hard" of each resource, limits.* in Limit. */
static void resourcequota_cells(struct row *r, json_t *q) {
	json_t *hard = at(q, "status", "hard", NULL), *used = at(q, "status", "used", NULL);
	struct kinf_buf request = {0}, limit = {0};
	struct kinf_strv names = {0};
	sorted_keys(hard, &names);
	for (size_t i = 0; i < names.n; i++) {
		const char *dot = strchr(names.v[i], '.');
		bool is_limit = dot && (size_t)(dot - names.v[i]) == 6 &&
			strncmp(names.v[i], "limits", 6) == 0;
		struct kinf_buf *w = is_limit ? &limit : &request;
		kinf_buf_putf(w, "%s%s: %s/%s", w->len ? ", " : "", names.v[i],
				quantity(used, names.v[i]), quantity(hard, names.v[i]));
	}
	if (kinf_strv_error(&names)) {
		kinf_buf_fail(&request, kinf_strv_error(&names));
	}
	cell_str(r, obj_name(q));
	cell_created(r, q);
	cell_buf(r, &request, "");
	cell_buf(r, &limit, "");
	kinf_strv_release(&names);
	kinf_buf_release(&request);
	kinf_buf_release(&limit);
}

/* core/v1 PodTemplate */
static const struct kinf_kindcols_column podtemplate_columns[] = {
	COLUMN_NAME,
	COLUMN_CONTAINERS(0),
	COLUMN_IMAGES(0),
	{ "Pod Labels", "string", "", 0,
		"The labels for the pod template." },
};

static void podtemplate_cells(struct row *r, json_t *o) {
	struct kinf_buf b = {0};
	cell_str(r, obj_name(o));
	cell_containers(r, at(o, "template", "spec", "containers", NULL));
	format_labels(at(o, "template", "metadata", "labels", NULL), &b);
	cell_buf(r, &b, "");
	kinf_buf_release(&b);
}

/* core/v1 ComponentStatus */
static const struct kinf_kindcols_column componentstatus_columns[] = {
	COLUMN_NAME,
	{ "Status", "string", "", 0,
		"Status of the component conditions" },
	{ "Message", "string", "", 0,
		"Message of the component conditions" },
	{ "Error", "string", "", 0,
		"Error of the component conditions" },
};

/* printComponentStatus: the first Healthy condition's. */
static void componentstatus_cells(struct row *r, json_t *o) {
	json_t *c, *healthy = NULL;
	size_t i;
	json_array_foreach(json_object_get(o, "conditions"), i, c) {
		if (strcmp(str(c, "type"), "Healthy") == 0) {
			healthy = c;
			break;
		}
	}
	cell_str(r, obj_name(o));
	cell_str(r, !healthy ? "Unknown" : strcmp(str(healthy, "status"), "True") == 0 ?
			"Healthy" : "Unhealthy");
	cell_str(r, str(healthy, "message"));
	cell_str(r, str(healthy, "error"));
}

const struct kinf_kindcols kindcols_core[] = {
	KIND("", "Pod", pod_columns, pod_cells),
	KIND("", "ReplicationController", replicationcontroller_columns,
		replicationcontroller_cells),
	KIND("", "Service", service_columns, service_cells),
	KIND("", "Endpoints", endpoints_columns, endpoints_cells),
	KIND("", "Node", node_columns, node_cells),
	KIND("", "Event", event_columns, event_cells),
	KIND("events.k8s.io", "Event", event_columns, events_event_cells),
	KIND("", "Namespace", namespace_columns, namespace_cells),
	KIND("", "Secret", secret_columns, secret_cells),
	KIND("", "ServiceAccount", serviceaccount_columns, serviceaccount_cells),
	KIND("", "ConfigMap", configmap_columns, configmap_cells),
	KIND("", "PersistentVolume", persistentvolume_columns, persistentvolume_cells),
	KIND("", "PersistentVolumeClaim", persistentvolumeclaim_columns,
		persistentvolumeclaim_cells),
	KIND("", "ResourceQuota", resourcequota_columns, resourcequota_cells),
	DEFAULT_KIND("", "LimitRange"),
	KIND("", "PodTemplate", podtemplate_columns, podtemplate_cells),
	KIND("", "ComponentStatus", componentstatus_columns, componentstatus_cells),
};
const size_t kindcols_n_core = sizeof(kindcols_core) / sizeof(*kindcols_core);
