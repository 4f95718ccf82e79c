#!/usr/bin/env python3
"""Regenerate test/fuzz/corpus/ (the seed corpora) from kinf's tests.

Sources: recorded streams in test/fixtures/streams, discovery documents in
test/fixtures/discovery, kubeconfig files in test/fixtures/kubeconfig and
the YAML and selector literals in test/unit/*.c, plus a few hand-made
inputs for paths the tests do not reach (bookmarks, ERROR events, exec
plugins, aliases). Each seed starts with the harness's flag bytes (see the
comment at the top of each fuzz_*.c). Run from anywhere; it replaces the
corpus directories.
"""
import hashlib
import json
import os
import re
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(TOP, "test", "fixtures")
CORPUS = os.path.join(HERE, "corpus")


def read(*parts):
    with open(os.path.join(*parts), "rb") as f:
        return f.read()


def c_literals(path):
    """Adjacent C string literals joined, one string per group."""
    text = read(path).decode()
    groups = re.findall(r'((?:"(?:[^"\\\n]|\\.)*"\s*)+)', text)
    out = []
    for g in groups:
        parts = re.findall(r'"((?:[^"\\\n]|\\.)*)"', g)
        s = "".join(parts)
        try:
            s = bytes(s, "utf-8").decode("unicode_escape").encode("latin-1")
        except (UnicodeDecodeError, UnicodeEncodeError):
            continue
        out.append(s)
    return out


def save(name, blobs):
    d = os.path.join(CORPUS, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    seen = set()
    for b in blobs:
        h = hashlib.sha1(b).hexdigest()
        if h in seen:
            continue
        seen.add(h)
        with open(os.path.join(d, h), "wb") as f:
            f.write(b)
    return len(seen)


def streams():
    out = []
    for f in sorted(os.listdir(os.path.join(FIX, "streams"))):
        if f.endswith(".json") and "." not in f[:-5]:
            out.append(read(FIX, "streams", f))
    return out


POD = (b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"default",'
       b'"uid":"u1","resourceVersion":"7","creationTimestamp":"2024-01-01T00:00:00Z",'
       b'"labels":{"app":"web","k8s.io/x":"y"},"annotations":{"a.b/c":"d"},'
       b'"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-x",'
       b'"uid":"u2","controller":true}]},"spec":{"nodeName":"n1","containers":'
       b'[{"name":"c","image":"nginx"}]},"status":{"phase":"Running",'
       b'"conditions":[{"type":"Ready","status":"True"}]}}')

EXTRA_EVENTS = [
    b'{"type":"ADDED","object":' + POD + b'}\n',
    b'{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":'
    b'{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}\n',
    b'{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",'
    b'"message":"too old resource version: 1 (5)","reason":"Expired","code":410}}\n',
    b'{\n  "type": "MODIFIED",\n  "object": {\n    "metadata": {"name": "a\\u00e9\\ud83d\\ude00",'
    b' "resourceVersion": "9"}\n  }\n}\n{"type":"DELETED","object":{"metadata":{"name":"b"}}}',
    b'{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"3"},"items":[' + POD + b']}',
    # Events back to back without newlines (client-go's stream decoder reads
    # them), with CR, tab and space between, and none after the last.
    b'{"type":"ADDED","object":' + POD + b'}{"type":"DELETED","object":' + POD + b'}',
    b'{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"2"}}}\r'
    b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"3"}}}\t '
    b'{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}} '
    b'{"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"4"}}}\n'
    b'{"type":"DELETED","object":{"metadata":{"name":"a","resourceVersion":"5"}}}{"type":',
]


def watchstream():
    out = []
    for s in streams() + EXTRA_EVENTS:
        for flags in (0, 1, 2, 4):
            out.append(bytes([flags]) + b"\x01\x02\x03\x04\x05\x06\x07\x08" + s)
    return out


def objects():
    objs = [POD]
    for s in streams():
        for line in s.splitlines():
            line = line.strip().rstrip(b",")
            if not line.startswith(b"{"):
                continue
            try:
                v = json.loads(line)
            except ValueError:
                continue
            o = v.get("object") if "object" in v else v if "metadata" in v and "items" not in v else None
            if isinstance(o, dict):
                objs.append(json.dumps(o, separators=(",", ":")).encode())
    out = []
    paths = [b"spec.containers[*].image", b"metadata.labels['k8s.io/x']",
             b"status.conditions[0].type", b"metadata.ownerReferences[*].name"]
    for i, o in enumerate(objs):
        out.append(bytes([i & 1]) + paths[i % len(paths)] + b"\0" + o)
    out.append(b"\0spec\0" + json.dumps(json.loads(POD), indent=2).encode())
    # managedFields first, in the middle, last, alone, and in spaced text.
    mf = b'"managedFields":[{"manager":"m","fieldsV1":{"f:x":{}}}]'
    for meta in (b'{' + mf + b',"name":"a"}', b'{"name":"a",' + mf + b',"uid":"u"}',
                 b'{"name":"a",' + mf + b'}', b'{' + mf + b'}'):
        out.append(b"\0metadata.managedFields[*].manager\0" + b'{"metadata":' + meta + b'}')
    out.append(b"\0spec\0" + b'{ "metadata" : { "name" : "a" ,\n ' + mf + b' } }')
    return out


def selectors():
    sels = set()
    for s in c_literals(os.path.join(TOP, "test", "unit", "test-selector.c")):
        if len(s) < 60 and b"{" not in s and b"%" not in s:
            sels.add(s)
    out = []
    for s in sorted(sels):
        field = 1 if b"." in s.split(b"=")[0] else 0
        out.append(bytes([field]) + s + b"\0" + POD)
    return out


KUBECONFIGS = [
    b"""apiVersion: v1
kind: Config
current-context: a
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
    tls-server-name: kubernetes
    proxy-url: http://proxy:3128
    extensions:
    - name: client.authentication.k8s.io/exec
      extension: {audience: x, list: [1, 2.5, true, null, "s"]}
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./plugin
      args: [--a, b]
      env: [{name: A, value: "1"}]
      interactiveMode: Never
      provideClusterInfo: true
      installHint: "install \\x1b[31mit"
contexts:
- name: a
  context: {cluster: c, user: u, namespace: ns}
""",
    b"""apiVersion: v1
clusters:
- &cl {name: c, cluster: {server: "https://h", insecure-skip-tls-verify: true}}
users:
- {name: u, user: {username: admin, password: secret}}
- {name: t, user: {tokenFile: /nonexistent/token}}
contexts:
- {name: a, context: {cluster: c, user: u}}
current-context: a
""",
    b"apiVersion: v1\nclusters: foo\n",
    b"current-context: x\ncontexts:\n- name: x\n  context: {cluster: nope}\n",
]


def kubeconfig():
    out = []
    docs = list(KUBECONFIGS)
    for root, _, files in os.walk(os.path.join(FIX, "kubeconfig", "merge")):
        for f in files:
            if f == "config":
                docs.append(read(root, f))
    for s in c_literals(os.path.join(TOP, "test", "unit", "test-kubeconfig.c")):
        if (b"clusters" in s or b"users" in s or b"contexts" in s) and b"%" not in s:
            docs.append(s)
    for i, d in enumerate(docs):
        out.append(bytes([(i * 37) & 0x7f]) + d)
        out.append(b"\0" + d)
    return out


def discovery():
    d = os.path.join(FIX, "discovery")
    agg = bytes([1]) + b"po\0" + read(d, "aggregated-api.json") + b"\0" + \
        read(d, "aggregated-apis.json")
    leg = os.path.join(d, "legacy")
    apis = json.loads(read(leg, "apis.json"))
    order = [read(leg, "api.json"), read(leg, "apis.json"), read(leg, "api_v1.json")]
    # A few groups only: libFuzzer works best on inputs of a few KB.
    apis["groups"] = [g for g in apis["groups"] if g["name"] in ("apps", "example.com")]
    order[1] = json.dumps(apis).encode()
    for g in apis["groups"]:
        for v in g["versions"]:
            f = "apis_" + v["groupVersion"].replace("/", "_") + ".json"
            if os.path.exists(os.path.join(leg, f)):
                order.append(read(leg, f))
    legacy = bytes([4]) + b"deploy\0" + b"\0".join(order)
    small = bytes([0]) + b"wd\0" + read(leg, "api.json") + b"\0" + \
        b'{"kind":"APIGroupList","groups":[{"name":"example.com","versions":'  \
        b'[{"groupVersion":"example.com/v1","version":"v1"}]}]}\0' + read(leg, "api_v1.json") + \
        b'\0{"kind":"APIResourceList","groupVersion":"example.com/v1","resources":[{"name":' \
        b'"widgets","singularName":"widget","namespaced":true,"kind":"Widget","verbs":' \
        b'["list","watch"],"shortNames":["wd"]}]}'
    return [agg, legacy, small, bytes([5]) + b"x\0" + read(d, "aggregated-api.json")]


TABLE = (b'{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"9"},'
         b'"columnDefinitions":[{"name":"Name","type":"string"}],"rows":[{"cells":["web-1"],'
         b'"object":{"kind":"PartialObjectMetadata","metadata":{"name":"web-1","namespace":"default"}}}]}')


def listsplit():
    lists = [b'{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"3",'
             b'"continue":"abc"},"items":[' + POD + b',' + POD.replace(b'web-1', b'web-2') + b']}',
             b'{"kind":"PodList","items":null}', b'{\n "items": [ ]\n}\n', TABLE]
    for s in streams():
        for line in s.splitlines():
            if b'"items"' in line:
                lists.append(line)
    # Members client-go ignores: scalars of every type, arrays, objects.
    lists += [b'{"n":3,"kind":"PodList","s":"x","t":true,"f":false,"z":null,"neg":-1.5e3,'
              b'"metadata":{"resourceVersion":"3"},"a":[1,"]",{"b":[]}],"items":[' + POD +
              b'],"o":{"k":"}"} , "e" : 0 }',
              b'{"kind":"PodList","items":[' + POD + b'],"rows":null,"x":tru}']
    out = []
    for i, l in enumerate(lists):
        out.append(bytes([i & 3]) + b"\x11\x22\x33\x44\x55\x66\x77\x88" + l)
    return out


def replay():
    out = []
    for s in streams() + EXTRA_EVENTS:
        for flags in (0, 1, 2, 3, 8, 16 | 8):
            out.append(bytes([flags]) + s)
    return out


def jsonskim():
    """The JSON cases of test/unit/test-jsonskim.c (the pod among them), at
    depth limits 64 and 3 (the flag byte is 1 + depth % 80)."""
    path = os.path.join(TOP, "test", "unit", "test-jsonskim.c")
    out = []
    for s in c_literals(path):
        if s[:1] in (b"{", b"["):
            out.append(bytes([63]) + s)
            out.append(bytes([2]) + s)
    return out


def header():
    """Header values: the injections of issue 16 and the edges of the rule
    (tab and bytes >= 0x80 pass, other control characters and DEL do
    not), each checked alone (flags 0), as a kubeconfig token (1) and as
    --token (2), both with -KINF_EAUTH (4)."""
    values = [b"", b"plain-token", b"abc\r\nX-Injected: 1", b"abc\nX-Injected: 1",
              b"abc\rX", b"a\tb", b"a\x00b", b"\x00", b"a\x7f", b"a\x1b]0;title\x07",
              b"tok\xc3\xa9n", b" spaced ", b"\x80\xff", b"eyJhbGciOiJSUzI1NiJ9.e30.sig"]
    out = []
    for v in values:
        for flags in (0, 1, 2, 7):
            out.append(bytes([flags]) + v)
    return out


KUBECTL_ACCEPT = (b"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;"
                  b"as=Table;v=v1beta1;g=meta.k8s.io,application/json")
EXTRA_REQUESTS = [
    b"GET /api/v1/namespaces/default/pods?labelSelector=app%3Dweb&limit=500 HTTP/1.1\r\n"
    b"Host: 127.0.0.1:8001\r\nUser-Agent: kubectl/v1.28.7\r\nAccept: " + KUBECTL_ACCEPT +
    b"\r\nAuthorization: Bearer abc\r\nAccept-Encoding: gzip\r\n\r\n",
    b"GET /api/v1/pods?allowWatchBookmarks=true&resourceVersion=12&timeoutSeconds=371&watch=true"
    b" HTTP/1.1\r\nHost: h\r\nAccept: application/json, */*\r\n\r\n",
    b"GET /apis HTTP/1.1\r\nHost: h\r\nAccept: application/json;g=apidiscovery.k8s.io;"
    b"v=v2beta1;as=APIGroupDiscoveryList,application/json\r\n\r\n",
    b"GET /apis/apps/v1/namespaces/ns/deployments/web/status HTTP/1.1\r\nHost: h\r\n\r\n",
    b"GET /api/v1/watch/namespaces/ns/pods?fieldSelector=spec.nodeName%3Dn1&continue=eyJ2Ijo"
    b"&sendInitialEvents&resourceVersionMatch=NotOlderThan HTTP/1.1\r\nHost: h\r\n\r\n",
    b"DELETE /api/v1/namespaces/ns/pods/a HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\n{}\r\n",
    b"POST /api/v1/namespaces HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n"
    b"Expect: 100-continue\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    b"GET /readyz/informer-sync?verbose HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    b"GET /openapi/v3/apis/apps/v1 HTTP/1.1\r\nHost: h\r\n\r\nGET /version HTTP/1.1\r\n"
    b"Host: h\r\n\r\n",
    b"\r\nGET /metrics HTTP/1.1\nHost: h\n\n",
]


def httpreq():
    """Hand-made requests (kubectl's, client-go's watch and discovery,
    writes, pipelining) and the request literals of test/unit/test-httpd.c,
    each with default (0) and tight (1) limits and a few cut points."""
    path = os.path.join(TOP, "test", "unit", "test-httpd.c")
    reqs = list(EXTRA_REQUESTS)
    for s in c_literals(path):
        if re.match(rb"^(\r\n)*[A-Z(]+ ", s) and b"HTTP/" in s:
            reqs.append(s)
    out = []
    for r in reqs:
        for flags in (0, 1, 6, 9, 14):
            out.append(bytes([flags]) + r)
    return out


def termsafe():
    """The strings of test/unit/test-termsafe.c, and what the hostile
    badserver.py mode puts into names."""
    path = os.path.join(TOP, "test", "unit", "test-termsafe.c")
    evil = ("\x1b]0;pwned\x07\x1b[2J\r\nkinf: fake line\x7f\u0085\u202eevil\u2066")
    return c_literals(path) + [("p" + evil).encode(), b"ns\x1b[31m/a\x00evil\xff"]


def main():
    for name, fn in (("watchstream", watchstream), ("object", objects),
                     ("selector", selectors), ("kubeconfig", kubeconfig),
                     ("discovery", discovery), ("replay", replay),
                     ("listsplit", listsplit), ("jsonskim", jsonskim),
                     ("header", header), ("httpreq", httpreq), ("termsafe", termsafe)):
        print(f"{name}: {save(name, fn())} seeds")


if __name__ == "__main__":
    main()
