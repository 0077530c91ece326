package ignore_test

import (
	"fmt"

	"github.com/kapply/kapply/pkg/ignore"
	"github.com/kapply/kapply/pkg/plan"
)

func Example() {
	list, err := ignore.Parse("rules.yaml", []byte(`apiVersion: kapply.dev/v1alpha1
kind: IgnoreRules
rules:
- group: apps
  kind: Deployment
  name: web-*
  jsonPointers: [/spec/replicas]
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	rules := &ignore.Rules{}
	if err := rules.Add(list...); err != nil {
		fmt.Println(err)
		return
	}
	id := plan.ID{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "web-1"}
	live := map[string]any{"spec": map[string]any{"replicas": int64(5), "paused": false}}
	after := map[string]any{"spec": map[string]any{"replicas": int64(2), "paused": false}}
	sides := rules.Strip(id, nil, live, after)
	fmt.Println(sides[0], sides[1])
	// Output: map[spec:map[paused:false]] map[spec:map[paused:false]]
}
