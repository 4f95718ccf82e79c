"""kfake: a stand-in Kubernetes API server for kinf's tests (stdlib only).

Modules:
  jsonutil   Go-compatible compact JSON, timestamps, human durations
  status     metav1.Status error objects (ApiError)
  catalog    served resource types, discovery and OpenAPI documents
  selection  label and field selectors (apimachinery grammar and messages)
  store      objects, the global resourceVersion, event history, snapshots
  tables     server-side printing (meta.k8s.io Table)
  patch      JSON merge, strategic merge and JSON patches
  generate   default data and --pods generation
  certs      CA, server and client certificates, kubeconfig
  control    the /_fake/ control interface state (faults, tokens, log)
  handler    the HTTP request handler
"""
