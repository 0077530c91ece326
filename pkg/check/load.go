package check

import (
	"context"
	"fmt"

	admv1 "k8s.io/api/admissionregistration/v1"
	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Clients are what a check reads the cluster with.
type Clients struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper
}

// policy is a ValidatingAdmissionPolicy with its bindings, compiled.
type policy struct {
	hook     validating.PolicyHook
	paramErr error // the param kind could not be resolved: a configuration error
}

// Checker holds what the cluster's admission policies decide with, read
// once (Load); Plan then checks any number of plans against it.
type Checker struct {
	clients  Clients
	user     user.Info
	matcher  generic.PolicyMatcher
	policies []policy
	mutating []mutator
}

// Load reads the cluster's policies, bindings, param objects, namespaces,
// mutating policies and webhooks, and who the user is. A list the user
// may not make is a RefusedError.
func Load(ctx context.Context, clients Clients) (*Checker, error) {
	c := &Checker{clients: clients}
	var err error
	if c.user, err = whoAmI(ctx, clients.Kube); err != nil {
		return nil, err
	}
	namespaces, err := listNamespaces(ctx, clients.Kube)
	if err != nil {
		return nil, err
	}
	c.matcher = generic.NewPolicyMatcher(matching.NewMatcher(namespaces, clients.Kube))
	if err := c.loadPolicies(ctx); err != nil {
		return nil, err
	}
	if c.mutating, err = loadMutators(ctx, clients.Kube); err != nil {
		return nil, err
	}
	return c, nil
}

func refused(what string, err error) error {
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
		return &RefusedError{What: what, Err: err}
	}
	return fmt.Errorf("listing %s: %w", what, err)
}

// whoAmI is the user the server authenticates the run as: the requests
// the check predicts are sent as this user (SelfSubjectReview).
func whoAmI(ctx context.Context, kube kubernetes.Interface) (user.Info, error) {
	review, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("asking the server who the user is (SelfSubjectReview): %w", err)
	}
	u := review.Status.UserInfo
	extra := map[string][]string{}
	for k, v := range u.Extra {
		extra[k] = v
	}
	return &user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra}, nil
}

func listNamespaces(ctx context.Context, kube kubernetes.Interface) (listersv1.NamespaceLister, error) {
	list, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, refused("namespaces", err)
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for i := range list.Items {
		if err := indexer.Add(&list.Items[i]); err != nil {
			return nil, fmt.Errorf("indexing namespace %s: %w", list.Items[i].Name, err)
		}
	}
	return listersv1.NewNamespaceLister(indexer), nil
}

func (c *Checker) loadPolicies(ctx context.Context) error {
	adm := c.clients.Kube.AdmissionregistrationV1()
	policies, err := adm.ValidatingAdmissionPolicies().List(ctx, metav1.ListOptions{})
	if err != nil {
		return refused("validatingadmissionpolicies.admissionregistration.k8s.io", err)
	}
	bindings, err := adm.ValidatingAdmissionPolicyBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return refused("validatingadmissionpolicybindings.admissionregistration.k8s.io", err)
	}
	byPolicy := map[string][]*admv1.ValidatingAdmissionPolicyBinding{}
	for i := range bindings.Items {
		b := &bindings.Items[i]
		byPolicy[b.Spec.PolicyName] = append(byPolicy[b.Spec.PolicyName], b)
	}
	env := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	params := map[admv1.ParamKind]*paramKind{}
	for i := range policies.Items {
		p := &policies.Items[i]
		if len(byPolicy[p.Name]) == 0 {
			continue // unbound: the server never evaluates it
		}
		c.policies = append(c.policies, c.newPolicy(ctx, env, p, byPolicy[p.Name], params))
	}
	for _, p := range c.policies {
		if apierrors.IsForbidden(p.paramErr) || apierrors.IsUnauthorized(p.paramErr) {
			return &RefusedError{What: fmt.Sprintf("the params (%s %s) of ValidatingAdmissionPolicy %s", p.hook.Policy.Spec.ParamKind.Kind, p.hook.Policy.Spec.ParamKind.APIVersion, p.hook.Policy.Name), Err: p.paramErr}
		}
	}
	return nil
}

func (c *Checker) newPolicy(ctx context.Context, env *environment.EnvSet, p *admv1.ValidatingAdmissionPolicy, bindings []*admv1.ValidatingAdmissionPolicyBinding, params map[admv1.ParamKind]*paramKind) policy {
	out := policy{}
	out.hook.Policy = p
	out.hook.Bindings = bindings
	out.hook.Evaluator = compilePolicy(env, p)
	if p.Spec.ParamKind == nil {
		return out
	}
	kind, ok := params[*p.Spec.ParamKind]
	if !ok {
		var err error
		if kind, err = c.listParams(ctx, *p.Spec.ParamKind); err != nil {
			// As the plugin: a param kind it cannot resolve is the
			// policy's configuration error (failurePolicy decides).
			out.paramErr = err
			out.hook.ConfigurationError = fmt.Errorf("failed to configure paramKind %s: %w", p.Spec.ParamKind, err)
			return out
		}
		params[*p.Spec.ParamKind] = kind
	}
	out.hook.ParamInformer = kind.informer
	out.hook.ParamScope = kind.scope
	return out
}

// listParams reads every object of a param kind, in all namespaces.
func (c *Checker) listParams(ctx context.Context, kind admv1.ParamKind) (*paramKind, error) {
	gv, err := schema.ParseGroupVersion(kind.APIVersion)
	if err != nil {
		return nil, err
	}
	mapping, err := c.clients.Mapper.RESTMapping(gv.WithKind(kind.Kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, err
	}
	list, err := c.clients.Dynamic.Resource(mapping.Resource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for i := range list.Items {
		if err := indexer.Add(&list.Items[i]); err != nil {
			return nil, fmt.Errorf("indexing %s %s: %w", kind.Kind, list.Items[i].GetName(), err)
		}
	}
	return &paramKind{informer: newListedInformer(indexer, mapping.Resource.GroupResource()), scope: mapping.Scope}, nil
}
