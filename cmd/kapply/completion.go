package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
)

// completionTimeout bounds the requests of one completion: a shell waits
// for them at every TAB, and a server that does not answer must not hang
// it (kubectl's completions wait for --request-timeout, unbounded by
// default).
const completionTimeout = 5 * time.Second

// applySetIDLabel and applySetParentTypeLabel are KEP-3659's labels: on an
// ApplySet's parent object, and on the CustomResourceDefinition of a kind
// that may be a parent.
const (
	applySetIDLabel         = "applyset.kubernetes.io/id"
	applySetParentTypeLabel = "applyset.kubernetes.io/is-parent-type"
)

// registerCompletions gives the shell completion (cobra's `completion`
// command and `__complete`) its dynamic values, read from the kubeconfig
// and the server as the flags given so far name them: --context, --cluster,
// --user and --namespace as kubectl completes them, --applyset with the
// ApplySets on the server, and kinds and names for every command taking
// TYPE/NAME arguments.
func registerCompletions(root *cobra.Command, getter *genericclioptions.ConfigFlags) {
	c := completer{getter: getter}
	register := func(cmd *cobra.Command, flag string, fn cobra.CompletionFunc) {
		if cmd.Flags().Lookup(flag) != nil || cmd.PersistentFlags().Lookup(flag) != nil {
			_ = cmd.RegisterFlagCompletionFunc(flag, bounded(fn)) // fails only for a flag registered twice
		}
	}
	register(root, "context", c.fromKubeconfig(func(cfg kubeconfigNames) []string { return cfg.contexts }))
	register(root, "cluster", c.fromKubeconfig(func(cfg kubeconfigNames) []string { return cfg.clusters }))
	register(root, "user", c.fromKubeconfig(func(cfg kubeconfigNames) []string { return cfg.users }))
	register(root, "namespace", c.namespaces)
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		register(cmd, "applyset", c.applySets)
		if cmd.ValidArgsFunction == nil && cmd.Runnable() && takesArgs(cmd) {
			cmd.ValidArgsFunction = bounded(c.kindsAndNames)
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	for _, sub := range root.Commands() {
		walk(sub)
	}
}

// bounded is fn, given up after completionTimeout with no values: each
// request is bounded, but client-go's deferred REST mapper asks discovery
// again after a failure, and a server that never answered held
// `export configmaps <TAB>` for twice the timeout. fn is left running;
// the process ends after one completion.
func bounded(fn cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		type answer struct {
			values    []cobra.Completion
			directive cobra.ShellCompDirective
		}
		done := make(chan answer, 1)
		go func() {
			values, directive := fn(cmd, args, toComplete)
			done <- answer{values, directive}
		}()
		select {
		case a := <-done:
			return a.values, a.directive
		case <-time.After(completionTimeout):
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	}
}

// takesArgs reports whether cmd accepts a TYPE/NAME argument.
func takesArgs(cmd *cobra.Command) bool {
	return cmd.Args == nil || cmd.Args(cmd, []string{"configmap/x"}) == nil
}

// completer reads the values of completions through the kubeconfig flags.
type completer struct {
	getter *genericclioptions.ConfigFlags
}

// kubeconfigNames are the names a kubeconfig defines.
type kubeconfigNames struct{ contexts, clusters, users []string }

func (c completer) fromKubeconfig(pick func(kubeconfigNames) []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, err := c.getter.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names kubeconfigNames
		for name := range cfg.Contexts {
			names.contexts = append(names.contexts, name)
		}
		for name := range cfg.Clusters {
			names.clusters = append(names.clusters, name)
		}
		for name := range cfg.AuthInfos {
			names.users = append(names.users, name)
		}
		return withPrefix(pick(names), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

func (c completer) namespaces(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx, cancel := c.start(cmd)
	defer cancel()
	names := c.names(ctx, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", "")
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// applySets completes --applyset=[RESOURCE[.GROUP]/]NAME with the parents
// of ApplySets on the server: Secrets (the default, written NAME) and
// ConfigMaps in the namespace, and the objects of every kind a
// CustomResourceDefinition marks as a parent type.
func (c completer) applySets(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx, cancel := c.start(cmd)
	defer cancel()
	namespace := c.namespace()
	sets := c.names(ctx, schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, namespace, applySetIDLabel)
	for _, name := range c.names(ctx, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, namespace, applySetIDLabel) {
		sets = append(sets, "configmaps/"+name)
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, crd := range c.names(ctx, crds, "", applySetParentTypeLabel+"=true") {
		resource := schema.ParseGroupResource(crd) // a CRD is named PLURAL.GROUP
		mapping, ok := c.mapping(resource.String())
		if !ok {
			continue
		}
		for _, name := range c.names(ctx, mapping.Resource, scopedNamespace(mapping, namespace), applySetIDLabel) {
			sets = append(sets, resource.String()+"/"+name)
		}
	}
	return withPrefix(sets, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// kindsAndNames completes TYPE/NAME and TYPE NAME arguments as kubectl's
// ResourceTypeAndNameCompletionFunc does: the server's resource types,
// then the names of objects of the type given.
func (c completer) kindsAndNames(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx, cancel := c.start(cmd)
	defer cancel()
	switch typ, prefix, typed := strings.Cut(toComplete, "/"); {
	case len(args) > 0 && !strings.Contains(args[0], "/"):
		names := slices.DeleteFunc(c.objectNames(ctx, args[0]), func(name string) bool { return slices.Contains(args[1:], name) })
		return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	case typed:
		var comps []string
		for _, name := range withPrefix(c.objectNames(ctx, typ), prefix) {
			comps = append(comps, typ+"/"+name)
		}
		return comps, cobra.ShellCompDirectiveNoFileComp
	case len(args) > 0:
		var comps []string
		for _, kind := range withPrefix(c.resourceTypes(), toComplete) {
			comps = append(comps, kind+"/")
		}
		return comps, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	return withPrefix(c.resourceTypes(), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// resourceTypes are the server's resource types that can be read, as
// `kubectl api-resources -o name` prints them: RESOURCE or RESOURCE.GROUP.
func (c completer) resourceTypes() []string {
	dc, err := c.getter.ToDiscoveryClient()
	if err != nil {
		return nil
	}
	// A group that does not answer leaves out its types, not the others.
	lists, _ := dc.ServerPreferredResources()
	var types []string
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "get") {
				continue
			}
			types = append(types, schema.GroupResource{Group: gv.Group, Resource: r.Name}.String())
		}
	}
	return types
}

// objectNames are the names of the objects of typ (a resource, kind or
// short name, as kubectl takes them) in the namespace.
func (c completer) objectNames(ctx context.Context, typ string) []string {
	mapping, ok := c.mapping(typ)
	if !ok {
		return nil
	}
	return c.names(ctx, mapping.Resource, scopedNamespace(mapping, c.namespace()), "")
}

func (c completer) mapping(typ string) (*meta.RESTMapping, bool) {
	mapper, err := c.getter.ToRESTMapper()
	if err != nil {
		return nil, false
	}
	gvk, err := mapper.KindFor(schema.ParseGroupResource(typ).WithVersion(""))
	if err != nil {
		return nil, false
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return mapping, err == nil
}

// names lists the names of the objects of gvr in namespace ("" for all, or
// cluster-scoped) that match selector, sorted; none when it cannot.
func (c completer) names(ctx context.Context, gvr schema.GroupVersionResource, namespace, selector string) []string {
	cfg, err := c.getter.ToRESTConfig()
	if err != nil {
		return nil
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil
	}
	list, err := client.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(list.Items))
	for _, item := range list.Items {
		names = append(names, item.GetName())
	}
	slices.Sort(names)
	return names
}

// namespace is --namespace, or the kubeconfig context's.
func (c completer) namespace() string {
	namespace, _, err := c.getter.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return metav1.NamespaceDefault
	}
	return namespace
}

// scopedNamespace is namespace for a namespaced kind, "" for a
// cluster-scoped one.
func scopedNamespace(mapping *meta.RESTMapping, namespace string) string {
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return namespace
	}
	return ""
}

// start bounds the completion's requests: ctx those that take one, and
// --request-timeout, unless given, those of discovery and the REST mapper,
// which take none. The process ends after one completion.
func (c completer) start(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	if timeout := c.getter.Timeout; timeout != nil && (*timeout == "" || *timeout == "0") {
		*timeout = completionTimeout.String()
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, completionTimeout)
}

// withPrefix is the values that start with prefix, sorted.
func withPrefix(values []string, prefix string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}
