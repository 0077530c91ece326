package load

import (
	"errors"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// ErrArgsAndFiles is cli-runtime's resource builder's refusal of resource
// arguments beside files, in its words (kubectl prints them).
var ErrArgsAndFiles = errors.New("when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well")

// ReadLiveArgs reads from the server the objects kubectl delete's
// arguments name — TYPE NAME..., TYPE/NAME..., or TYPE[,TYPE] with a label
// selector — in the namespace of the kubeconfig or -n, through
// cli-runtime's resource builder as kubectl does (its messages for a type
// without a name, a name with a selector). As kubectl delete, one object
// that cannot be read is an error of its own and the others are read.
func ReadLiveArgs(getter genericclioptions.RESTClientGetter, args []string, selector string) ([]*Object, []error) {
	b, _, err := builder(getter)
	if err != nil {
		return nil, []error{err}
	}
	infos, err := b.ContinueOnError().LabelSelectorParam(selector).ResourceTypeOrNameArgs(false, args...).Flatten().Do().Infos()
	objects, convErr := objectsOf(infos)
	var errs []error
	if err != nil {
		errs = utilerrors.Flatten(asAggregate(err)).Errors()
	}
	if convErr != nil {
		errs = append(errs, convErr)
	}
	return objects, errs
}

func asAggregate(err error) utilerrors.Aggregate {
	if agg, ok := err.(utilerrors.Aggregate); ok {
		return agg
	}
	return utilerrors.NewAggregate([]error{err})
}
