package ignore

import (
	"reflect"
	"testing"

	"github.com/kapply/kapply/pkg/plan"
)

// TestIgnoreRespectSecretStringData: a rule on a Secret's /data/password
// hid the password's change from the diff (the server folds stringData
// into data), but apply --respect-ignore of a file writing
// stringData.password copied live's data.password into the file and left
// stringData.password there, which the server applies over data: the live
// password was overwritten. A data key a rule keeps (at live's value, or
// absent) now takes its stringData key out of the file too.
func TestIgnoreRespectSecretStringData(t *testing.T) {
	secretID := plan.ID{Version: "v1", Kind: "Secret", Namespace: "prod", Name: "db"}
	live := obj(t, `
apiVersion: v1
kind: Secret
metadata: {name: db, namespace: prod}
data: {password: bGl2ZQ==, user: YWRtaW4=}
`)
	file := obj(t, `
apiVersion: v1
kind: Secret
metadata: {name: db, namespace: prod}
stringData: {password: fromfile, user: root, token: new, apikey: k}
`)
	rs := rulesOf(t, header+`- kind: Secret
  jsonPointers: [/data/password, /data/token]
  jqPathExpressions: [.data.user]
`)
	got, _, err := rs.Respect(secretID, nil, file, live)
	if err != nil {
		t.Fatal(err)
	}
	want := obj(t, `
apiVersion: v1
kind: Secret
metadata: {name: db, namespace: prod}
data: {password: bGl2ZQ==, user: YWRtaW4=}
stringData: {apikey: k}
`)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("respected file:\n%v\nwant\n%v (the ignored keys at live's values, token not created, apikey the file's)", got, want)
	}
	// A ConfigMap's stringData is no Secret's: left alone.
	cm := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: db, namespace: prod}\nstringData: {password: x}\n")
	cmGot, _, err := rs.Respect(plan.ID{Version: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "db"}, nil, cm, live)
	if err != nil || !reflect.DeepEqual(cmGot, cm) {
		t.Errorf("a ConfigMap: %v, %v; want it unchanged", cmGot, err)
	}
}
