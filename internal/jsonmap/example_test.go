package jsonmap_test

import (
	"fmt"

	"github.com/kapply/kapply/internal/jsonmap"
)

func ExampleObject() {
	obj, err := jsonmap.Object([]byte(`{"spec":{"replicas":3,"ratio":0.5,"big":1e3},"note":"caf\u00e9"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	spec := obj["spec"].(map[string]any)
	fmt.Printf("%T %T %T %v\n", spec["replicas"], spec["ratio"], spec["big"], obj["note"])

	_, err = jsonmap.Object([]byte(`{"spec":{"replicas":3,}}`))
	fmt.Println(err)
	// Output:
	// int64 float64 float64 café
	// invalid character '}' looking for beginning of object key string at offset 22
}
