#!/usr/bin/python3
"""Make fakeapi's OpenAPI documents from a real kube-apiserver's.

Usage: openapi.py K8S_SOURCE [OUT_DIR]

K8S_SOURCE is a Kubernetes source tree (v1.28.7: the documents fakeapi
ships are from it) with vendor/; OUT_DIR defaults to
test/fakeapi/kfake/openapi beside this script.  Reads the documents a real
server answers, as the Kubernetes repository keeps them
(api/openapi-spec/swagger.json for /openapi/v2, api/openapi-spec/v3/*.json
for /openapi/v3/...), and keeps of them what fakeapi serves: the paths of
its resource types (their subresources included) and the schemas and
parameters those paths reach, so that kubectl explain, apply and create
find what they look for while the files stay small.  The custom resource
widgets.example.com gets documents built as apiextensions-apiserver's
builder builds them for a CRD (routes of builder.go, the schema below),
from the Deployment's parameters and responses.

Writes OUT_DIR/v2.json.gz, OUT_DIR/v2.pb.gz (the protobuf form, made by
openapi-v2-pb.go with the source's vendored gnostic-models: Go 1.21 is
looked for on PATH, then under /work/realapi/toolchain) and
OUT_DIR/v3/<path with / as __>.json.gz.  JSON is compact with sorted keys.
"""

import copy
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

# What fakeapi serves (kfake/catalog.py), by group-version path.
SERVED = {
    'api/v1': ['configmaps', 'events', 'namespaces', 'nodes', 'pods', 'serviceaccounts',
               'services'],
    'apis/apps/v1': ['deployments'],
    'apis/rbac.authorization.k8s.io/v1': ['clusterroles', 'clusterrolebindings'],
}
# Documents of the index (/openapi/v3) kept whole: discovery and /version.
V3_WHOLE = ['api', 'apis', 'apis/apps', 'apis/rbac.authorization.k8s.io', 'version']
# v2 paths outside the group-versions that are kept.
V2_EXTRA = ['/api/', '/apis/', '/apis/apps/', '/apis/rbac.authorization.k8s.io/', '/version/']

WIDGET = {'group': 'example.com', 'version': 'v1', 'kind': 'Widget', 'plural': 'widgets',
          'list_kind': 'WidgetList'}
# The CRD's structural schema (spec and status of fakeapi's widgets).
WIDGET_SCHEMA = {
    'spec': {'type': 'object', 'properties': {'color': {'type': 'string'},
                                              'size': {'type': 'integer'}}},
    'status': {'type': 'object', 'properties': {'state': {'type': 'string'}}},
}


def dumps(doc):
    return json.dumps(doc, sort_keys=True, separators=(',', ':'), ensure_ascii=False).encode()


def resource_of(path, prefix):
    """The resource a path of group-version prefix is about ('' for the root)."""
    segs = [s for s in path[len(prefix):].split('/') if s]
    if segs and segs[0] == 'watch':
        segs = segs[1:]
    if len(segs) > 2 and segs[0] == 'namespaces' and segs[1] == '{namespace}':
        segs = segs[2:]
    return segs[0] if segs else ''


def refs(node, out):
    if isinstance(node, dict):
        r = node.get('$ref')
        if isinstance(r, str):
            out.add(r)
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)


def closure(doc, roots, sections):
    """{section: {name: value}} of what roots reach; sections maps a $ref
    prefix ('#/definitions/') to where its targets live (a list of keys)."""
    kept = {p: {} for p in sections}
    todo = set()
    refs(roots, todo)
    while todo:
        r = todo.pop()
        for prefix, where in sections.items():
            if not r.startswith(prefix):
                continue
            name = r[len(prefix):]
            if name in kept[prefix]:
                break
            table = doc
            for k in where:
                table = table[k]
            kept[prefix][name] = table[name]
            more = set()
            refs(table[name], more)
            todo |= more - {r}
            break
        else:
            raise SystemExit('unknown $ref %s' % r)
    return kept


def widget_paths(paths, prefix, ref):
    """The CRD's routes (builder.go generateBuilder), from the Deployment's."""
    w = WIDGET
    src = '/apis/apps/v1'
    dst = '/apis/%s/%s' % (w['group'], w['version'])
    routes = [('/deployments', ['get']),
              ('/namespaces/{namespace}/deployments', ['get', 'post', 'delete']),
              ('/namespaces/{namespace}/deployments/{name}', ['get', 'put', 'delete', 'patch'])]
    out = {}
    for sub, verbs in routes:
        item = paths[src + sub]
        new = {k: copy.deepcopy(v) for k, v in item.items() if k in verbs or k == 'parameters'}
        text = json.dumps(new)
        text = text.replace(ref + 'io.k8s.api.apps.v1.DeploymentList',
                            ref + 'com.example.v1.WidgetList')
        text = text.replace(ref + 'io.k8s.api.apps.v1.Deployment', ref + 'com.example.v1.Widget')
        text = text.replace('AppsV1', 'ExampleComV1').replace('Deployment', 'Widget')
        text = text.replace('"apps_v1"', '"exampleCom_v1"').replace(
            '"group": "apps"', '"group": "example.com"')
        text = text.replace('deployments', 'widgets')
        out[dst + sub.replace('deployments', 'widgets')] = json.loads(text)
    return out


def widget_schemas(deployment, deployment_list, ref):
    """Widget and WidgetList as the builder makes them (buildKubeNative,
    buildListSchema): the CRD's schema plus apiVersion, kind and metadata."""
    w = WIDGET
    props = {k: deployment['properties'][k] for k in ('apiVersion', 'kind', 'metadata')}
    props.update(copy.deepcopy(WIDGET_SCHEMA))
    widget = {'type': 'object', 'properties': props,
              'x-kubernetes-group-version-kind': [
                  {'group': w['group'], 'kind': w['kind'], 'version': w['version']}]}
    lprops = copy.deepcopy(deployment_list['properties'])
    items = lprops['items']
    items['items'] = {'$ref': ref + 'com.example.v1.Widget'}
    items['description'] = 'List of widgets. More info: https://git.k8s.io/community/' \
        'contributors/devel/sig-architecture/api-conventions.md'
    wlist = {'description': '%s is a list of %s' % (w['list_kind'], w['kind']),
             'type': 'object', 'required': ['items'], 'properties': lprops,
             'x-kubernetes-group-version-kind': [
                 {'group': w['group'], 'kind': w['list_kind'], 'version': w['version']}]}
    return {'com.example.v1.Widget': widget, 'com.example.v1.WidgetList': wlist}


def v3_docs(spec_dir):
    out = {}
    for gv in V3_WHOLE:
        with open(os.path.join(spec_dir, 'v3', gv.replace('/', '__') + '_openapi.json')) as f:
            out[gv] = json.load(f)
    ref = '#/components/schemas/'
    for gv, resources in SERVED.items():
        with open(os.path.join(spec_dir, 'v3', gv.replace('/', '__') + '_openapi.json')) as f:
            doc = json.load(f)
        prefix = '/' + gv
        paths = {p: v for p, v in doc['paths'].items()
                 if resource_of(p, prefix) in [''] + resources}
        kept = closure(doc, paths, {ref: ['components', 'schemas']})
        new = {k: v for k, v in doc.items() if k not in ('paths', 'components')}
        new['paths'] = paths
        new['components'] = dict(doc['components'])
        new['components']['schemas'] = kept[ref]
        out[gv] = new
        if gv == 'apis/apps/v1':
            apps = doc
    # example.com: its group document as the apps one, its version from the builder.
    group = json.loads(json.dumps(out['apis/apps']).replace('/apis/apps/', '/apis/example.com/')
                       .replace('AppsAPIGroup', 'ExampleComAPIGroup').replace('"apps"',
                                                                            '"exampleCom"'))
    out['apis/example.com'] = group
    wpaths = widget_paths(apps['paths'], '/apis/apps/v1', ref)
    schemas = apps['components']['schemas']
    wdefs = widget_schemas(schemas['io.k8s.api.apps.v1.Deployment'],
                           schemas['io.k8s.api.apps.v1.DeploymentList'], ref)
    schemas.update(wdefs)
    kept = closure(apps, wpaths, {ref: ['components', 'schemas']})
    out['apis/example.com/v1'] = {
        'openapi': apps['openapi'], 'info': apps['info'], 'paths': wpaths,
        'components': {'schemas': kept[ref],
                       'securitySchemes': apps['components']['securitySchemes']}}
    return out



def v2_doc(spec_dir):
    with open(os.path.join(spec_dir, 'swagger.json')) as f:
        doc = json.load(f)
    paths = {}
    for p, v in doc['paths'].items():
        if p in V2_EXTRA:
            paths[p] = v
            continue
        for gv, resources in SERVED.items():
            prefix = '/' + gv
            if (p + '/').startswith(prefix + '/') and resource_of(p, prefix) in [''] + resources:
                paths[p] = v
    ref = '#/definitions/'
    wpaths = widget_paths(doc['paths'], '/apis/apps/v1', ref)
    wdefs = widget_schemas(doc['definitions']['io.k8s.api.apps.v1.Deployment'],
                           doc['definitions']['io.k8s.api.apps.v1.DeploymentList'], ref)
    group = json.loads(json.dumps(doc['paths']['/apis/apps/']).replace(
        'AppsAPIGroup', 'ExampleComAPIGroup').replace('"apps"', '"exampleCom"'))
    paths['/apis/example.com/'] = group
    paths.update(wpaths)
    doc['definitions'].update(wdefs)
    sections = {ref: ['definitions'], '#/parameters/': ['parameters']}
    kept = closure(doc, paths, sections)
    new = {k: v for k, v in doc.items() if k not in ('paths', 'definitions', 'parameters')}
    new['paths'] = paths
    new['definitions'] = kept[ref]
    new['parameters'] = kept['#/parameters/']
    return new


def find_go():
    go = shutil.which('go')
    if go:
        return go
    for cand in ('/work/realapi/toolchain/usr/lib/go-1.21/bin/go',):
        if os.path.exists(cand):
            return cand
    raise SystemExit('openapi.py: no Go toolchain (go on PATH) for the protobuf form')


def v2_protobuf(src, json_bytes):
    """ToProtoBinary of json_bytes, by openapi-v2-pb.go built against the
    source's vendored modules (a throw-away module with a vendor tree)."""
    here = os.path.dirname(os.path.abspath(__file__))
    vendor = os.path.join(src, 'vendor')
    mods = [('github.com/google/gnostic-models', 'v0.6.8'),
            ('github.com/golang/protobuf', 'v1.5.3'),
            ('google.golang.org/protobuf', 'v1.31.0'),
            ('gopkg.in/yaml.v3', 'v3.0.1')]
    with tempfile.TemporaryDirectory() as tmp:
        lines = []
        with open(os.path.join(vendor, 'modules.txt')) as f:
            current = None
            for line in f:
                if line.startswith('# '):
                    current = line.split()[1]
                if current in [m for m, _ in mods]:
                    lines.append(line)
        for m, _ in mods:
            shutil.copytree(os.path.join(vendor, m), os.path.join(tmp, 'vendor', m))
        with open(os.path.join(tmp, 'vendor', 'modules.txt'), 'w') as f:
            f.writelines(lines)
        with open(os.path.join(tmp, 'go.mod'), 'w') as f:
            f.write('module openapiv2pb\n\ngo 1.20\n\nrequire (\n')
            for m, v in mods:
                f.write('\t%s %s\n' % (m, v))
            f.write(')\n')
        shutil.copy(os.path.join(here, 'openapi-v2-pb.go'), os.path.join(tmp, 'main.go'))
        env = dict(os.environ, GOFLAGS='-mod=vendor', GOPROXY='off', GOTOOLCHAIN='local',
                   GOCACHE=os.path.join(tmp, 'cache'), GOPATH=os.path.join(tmp, 'gopath'))
        subprocess.run([find_go(), 'build', '-o', 'pb', '.'], cwd=tmp, env=env, check=True)
        return subprocess.run([os.path.join(tmp, 'pb')], input=json_bytes,
                              stdout=subprocess.PIPE, check=True).stdout


def write_gz(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as f:
        # mtime 0: the same input makes the same file
        with gzip.GzipFile(fileobj=f, mode='wb', compresslevel=9, mtime=0) as z:
            z.write(data)


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    src = argv[1]
    out = argv[2] if len(argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', 'kfake', 'openapi')
    spec_dir = os.path.join(src, 'api', 'openapi-spec')
    v2 = dumps(v2_doc(spec_dir))
    write_gz(os.path.join(out, 'v2.json.gz'), v2)
    write_gz(os.path.join(out, 'v2.pb.gz'), v2_protobuf(src, v2))
    for gv, doc in v3_docs(spec_dir).items():
        write_gz(os.path.join(out, 'v3', gv.replace('/', '__') + '.json.gz'), dumps(doc))


if __name__ == '__main__':
    main(sys.argv)
