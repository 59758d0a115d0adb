// Command etcd is the upstream etcd server, built from its Go module. It has its own module so
// that etcd's dependency versions do not have to agree with those of k8s.io/kubernetes.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
