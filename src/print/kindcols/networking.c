/*
 * networking.k8s.io/v1, and discovery.k8s.io/v1's EndpointSlice.
 */
#include <string.h>

#include "kindcols_int.h"

/* networking.k8s.io Ingress */
static const struct kinf_kindcols_column ingress_columns[] = {
	COLUMN_NAME,
	{ "Class", "string", "", 0,
		"The name of the IngressClass resource that should be used for additional "
		"configuration" },
	{ "Hosts", "string", "", 0,
		"Hosts that incoming requests are matched against before the ingress rule" },
	{ "Address", "string", "", 0,
		"Address is a list containing ingress points for the load-balancer" },
	{ "Ports", "string", "", 0,
		"Ports of TLS configurations that open" },
	COLUMN_AGE,
};

/* formatHosts: up to three hosts, "+ N more..." counting every rule, "*" for none. */
static void ingress_hosts(json_t *rules, struct kinf_buf *out) {
	size_t listed = 0, i;
	bool more = false;
	json_t *rule;
	json_array_foreach(rules, i, rule) {
		more = more || listed == 3;
		if (!more && str(rule, "host")[0]) {
			kinf_buf_putf(out, "%s%s", listed++ ? "," : "", str(rule, "host"));
		}
	}
	if (listed == 0) {
		kinf_buf_puts(out, "*");
	} else if (more) {
		kinf_buf_putf(out, " + %zu more...", json_array_size(rules) - 3);
	}
}

/* printIngress */
static void ingress_cells(struct row *r, json_t *ing) {
	json_t *spec = json_object_get(ing, "spec");
	const char *class = json_string_value(json_object_get(spec, "ingressClassName"));
	struct kinf_buf b = {0};
	cell_str(r, obj_name(ing));
	cell_str(r, class ? class : "<none>");
	ingress_hosts(json_object_get(spec, "rules"), &b);
	cell_buf(r, &b, "");
	load_balancer_ingress(at(ing, "status", "loadBalancer", "ingress", NULL), &b);
	cell_buf(r, &b, "");
	cell_str(r, json_array_size(json_object_get(spec, "tls")) ? "80, 443" : "80");
	cell_created(r, ing);
	kinf_buf_release(&b);
}

/* networking.k8s.io IngressClass */
static const struct kinf_kindcols_column ingressclass_columns[] = {
	COLUMN_NAME,
	{ "Controller", "string", "", 0,
		"Controller that is responsible for handling this class" },
	{ "Parameters", "string", "", 0,
		"A reference to a resource with additional parameters" },
	COLUMN_AGE,
};

/* printIngressClass: parameters as Kind[.apiGroup]/name */
static void ingressclass_cells(struct row *r, json_t *ic) {
	json_t *spec = json_object_get(ic, "spec"), *p = json_object_get(spec, "parameters");
	const char *group = json_string_value(json_object_get(p, "apiGroup"));
	cell_str(r, obj_name(ic));
	cell_str(r, str(spec, "controller"));
	if (json_is_object(p)) {
		cell_strf(r, "%s%s%s/%s", str(p, "kind"), group ? "." : "", group ? group : "",
				str(p, "name"));
	} else {
		cell_str(r, "<none>");
	}
	cell_created(r, ic);
}

/* networking.k8s.io NetworkPolicy */
static const struct kinf_kindcols_column networkpolicy_columns[] = {
	COLUMN_NAME,
	{ "Pod-Selector", "string", "", 0,
		"Selects the pods to which this NetworkPolicy object applies.  The array of "
		"ingress rules is applied to any pods selected by this field. Multiple "
		"network policies can select the same set of pods.  In this case, the "
		"ingress rules for each are combined additively. This field is NOT optional "
		"and follows standard label selector semantics. An empty podSelector matches "
		"all pods in this namespace." },
	COLUMN_AGE,
};

static void networkpolicy_cells(struct row *r, json_t *np) {
	struct kinf_buf b = {0};
	cell_str(r, obj_name(np));
	format_label_selector(at(np, "spec", "podSelector", NULL), "<none>", &b);
	cell_buf(r, &b, "");
	cell_created(r, np);
	kinf_buf_release(&b);
}

/* discovery.k8s.io EndpointSlice */
static const struct kinf_kindcols_column endpointslice_columns[] = {
	COLUMN_NAME,
	{ "AddressType", "string", "", 0,
		"addressType specifies the type of address carried by this EndpointSlice. "
		"All addresses in this slice must be the same type. This field is immutable "
		"after creation. The following address types are currently supported: * "
		"IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * "
		"FQDN: Represents a Fully Qualified Domain Name." },
	{ "Ports", "string", "", 0,
		"ports specifies the list of network ports exposed by each endpoint in this "
		"slice. Each port must have a unique name. When ports is empty, it indicates "
		"that there are no defined ports. When a port is defined with a nil port "
		"value, it indicates \"all ports\". Each slice may include a maximum of 100 "
		"ports." },
	{ "Endpoints", "string", "", 0,
		"endpoints is a list of unique endpoints in this slice. Each slice may "
		"include a maximum of 1000 endpoints." },
	COLUMN_AGE,
};

/* printEndpointSlice: formatDiscoveryPorts, formatDiscoveryEndpoints */
static void endpointslice_cells(struct row *r, json_t *es) {
	struct list_more ports = { .max = 3 }, addrs = { .max = 3 };
	struct kinf_buf item = {0};
	size_t i, j;
	json_t *p, *e, *a;
	json_array_foreach(json_object_get(es, "ports"), i, p) {
		/* the number, else the name (even ""), else "*" */
		kinf_buf_reset(&item);
		if (json_is_integer(json_object_get(p, "port"))) {
			kinf_buf_putf(&item, "%lld", num(p, "port"));
		} else {
			kinf_buf_puts(&item, json_is_string(json_object_get(p, "name")) ?
					str(p, "name") : "*");
		}
		list_more_add(&ports, item.data ? item.data : "");
	}
	json_array_foreach(json_object_get(es, "endpoints"), i, e) {
		json_array_foreach(json_object_get(e, "addresses"), j, a) {
			list_more_add(&addrs, json_string_value(a) ? json_string_value(a) : "");
		}
	}
	cell_str(r, obj_name(es));
	cell_str(r, str(es, "addressType"));
	cell_list_more(r, &ports, "<unset>");
	cell_list_more(r, &addrs, "<unset>");
	cell_created(r, es);
	kinf_buf_release(&item);
}

const struct kinf_kindcols kindcols_networking[] = {
	KIND("networking.k8s.io", "Ingress", ingress_columns, ingress_cells),
	KIND("networking.k8s.io", "IngressClass", ingressclass_columns, ingressclass_cells),
	KIND("networking.k8s.io", "NetworkPolicy", networkpolicy_columns, networkpolicy_cells),
	KIND("discovery.k8s.io", "EndpointSlice", endpointslice_columns, endpointslice_cells),
};
const size_t kindcols_n_networking = sizeof(kindcols_networking) / sizeof(*kindcols_networking);
