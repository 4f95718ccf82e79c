// openapi-v2-pb: an OpenAPI v2 document (JSON, stdin) in the protobuf form
// kube-apiserver serves at /openapi/v2 for
// Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf
// (stdout): kube-openapi's handler.ToProtoBinary, gnostic's Document
// marshalled. Built and run by openapi.py with the Kubernetes source's
// vendored gnostic-models and protobuf; not part of kinf's build.
package main

import (
	"io"
	"os"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"github.com/golang/protobuf/proto"
)

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		panic(err)
	}
	doc, err := openapi_v2.ParseDocument(in)
	if err != nil {
		panic(err)
	}
	out, err := proto.Marshal(doc)
	if err != nil {
		panic(err)
	}
	if _, err := os.Stdout.Write(out); err != nil {
		panic(err)
	}
}
