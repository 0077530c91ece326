package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kapply/kapply/internal/testcluster"
)

// writeTrees writes the fleet tree (-objects objects without a namespace:
// each context's applies) and, for each of -runs repetitions, a
// single-server tree (the same objects in each of -contexts/3 namespaces).
func (b *fleetBench) writeTrees() error {
	tr, err := newTree(filepath.Join(b.work, "fleet-tree"), "fleet", b.cfg)
	if err != nil {
		return err
	}
	for i := range b.cfg.objects {
		obj := object{Kind: kindOf(i), Name: fmt.Sprintf("app-%04d", i), Index: i, Dir: fmt.Sprintf("sub-%02d", i%subdirs)}
		if err := b.render(tr, filepath.Join(b.work, "fleet-tree"), obj); err != nil {
			return err
		}
		for rep := range b.cfg.runs {
			for _, ns := range singleNamespaces(rep, b.cfg.contexts/fleetServers) {
				obj.Namespace = ns
				if err := b.render(tr, filepath.Join(b.singleTree(rep), ns), obj); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// render writes obj under dir; without a namespace, the manifest has none
// (the context's applies).
func (b *fleetBench) render(tr *tree, dir string, obj object) error {
	path := filepath.Join(dir, obj.Dir, obj.Kind+"-"+obj.Name+".yaml")
	if err := tr.render(path, obj); err != nil {
		return err
	}
	if obj.Namespace != "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	data = bytes.Replace(data, []byte("\n  namespace: \n"), []byte("\n"), 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// singleNamespaces are the namespaces of the single-server tree of
// repetition rep.
func singleNamespaces(rep, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("single%d-%02d", rep, i)
	}
	return names
}

// singleTree is the single-server tree of repetition rep: each creates
// its objects anew.
func (b *fleetBench) singleTree(rep int) string {
	return filepath.Join(b.work, fmt.Sprintf("single-tree-%d", rep))
}

func contextName(set string, i int) string { return fmt.Sprintf("%s-%02d", set, i) }

// addServer adds the admin context of a server's kubeconfig under name,
// through a latency proxy with -latency.
func (b *fleetBench) addServer(name, path string) error {
	from, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	ctx := from.Contexts[from.CurrentContext]
	b.kubeconfig.Clusters[name] = from.Clusters[ctx.Cluster]
	if b.cfg.latency > 0 {
		proxy, err := startLatencyProxy(from.Clusters[ctx.Cluster].Server, b.cfg.latency)
		if err != nil {
			return fmt.Errorf("starting the latency proxy of %s: %w", name, err)
		}
		b.proxies = append(b.proxies, proxy)
		b.kubeconfig.Clusters[name].Server = proxy.URL()
	}
	b.kubeconfig.AuthInfos[name] = from.AuthInfos[ctx.AuthInfo]
	b.kubeconfig.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	return nil
}

// addContexts adds count contexts of set on the servers in turn, each
// with its own new namespace.
func (b *fleetBench) addContexts(ctx context.Context, set string, count int) error {
	for i := range count {
		name, server := contextName(set, i), fmt.Sprintf("server%d", i%fleetServers)
		if err := b.createNamespaces(ctx, b.servers[i%fleetServers], []string{name}); err != nil {
			return err
		}
		b.kubeconfig.Contexts[name] = &clientcmdapi.Context{Cluster: server, AuthInfo: server, Namespace: name}
	}
	return nil
}

func (b *fleetBench) createNamespaces(ctx context.Context, s *testcluster.Cluster, names []string) error {
	client, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	for _, name := range names {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	return nil
}
