package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"text/template"
)

// subdirs is how many folders the tree spreads its files over.
const subdirs = 10

// tree is one tool's generated manifests: one object per file, the
// Namespaces in a folder of their own, the others in subdirs folders.
type tree struct {
	dir        string
	prefix     string // Namespaces are prefix-0 .. prefix-(namespaces-1)
	objects    int    // the Namespaces included
	namespaces int
	templates  *template.Template
}

// object is what a template needs to render one manifest.
type object struct {
	Kind      string // the template's name
	Name      string
	Namespace string
	Index     int
	Gen       int
	Dir       string // the folder in the tree
}

func newTree(dir, prefix string, cfg config) (*tree, error) {
	tmpl, err := template.New("manifests").Parse(manifestTemplates)
	if err != nil {
		return nil, fmt.Errorf("parsing the manifest templates: %w", err)
	}
	return &tree{dir: dir, prefix: prefix, objects: cfg.objects, namespaces: cfg.namespaces, templates: tmpl}, nil
}

// workloadKinds are the templates of the objects other than Namespaces:
// every tenth is a custom resource (see crdManifest), the built-in kinds
// take turns in the others.
func workloadKinds() []string {
	return []string{"widget", "configmap", "deployment", "service"}
}

// widgetEvery is how often a custom resource comes among the workloads.
const widgetEvery = 10

// kindOf is the template of the i-th object other than the Namespaces.
func kindOf(i int) string {
	kinds := workloadKinds()
	if i%widgetEvery == 0 {
		return kinds[0]
	}
	builtin := kinds[1:]
	return builtin[(i-i/widgetEvery-1)%len(builtin)]
}

// write renders every manifest of the tree at this generation, replacing
// the files of an earlier one: every object of generation g+1 differs from
// generation g.
func (t *tree) write(gen int) error {
	for _, obj := range t.list(gen) {
		path := filepath.Join(t.dir, obj.Dir, obj.Kind+"-"+obj.Name+".yaml")
		if err := t.render(path, obj); err != nil {
			return err
		}
	}
	return nil
}

// list returns the Namespaces, in a folder of their own that sorts first
// (kubectl applies files in the order it walks them), then the other
// objects: kinds in turn, namespaces in turn, every folder holding every
// kind and namespace.
func (t *tree) list(gen int) []object {
	objs := make([]object, 0, t.objects)
	for i := range t.namespaces {
		name := fmt.Sprintf("%s-%d", t.prefix, i)
		objs = append(objs, object{Kind: "namespace", Name: name, Index: i, Gen: gen, Dir: "00-namespaces"})
	}
	for i := range t.objects - t.namespaces {
		ns := fmt.Sprintf("%s-%d", t.prefix, i%t.namespaces)
		name := fmt.Sprintf("app-%04d", i)
		objs = append(objs, object{Kind: kindOf(i), Name: name, Namespace: ns, Index: i, Gen: gen,
			Dir: fmt.Sprintf("sub-%02d", i/t.namespaces%subdirs)})
	}
	return objs
}

func (t *tree) render(path string, obj object) error {
	var buf bytes.Buffer
	if err := t.templates.ExecuteTemplate(&buf, obj.Kind, obj); err != nil {
		return fmt.Errorf("rendering %s %s: %w", obj.Kind, obj.Name, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating the folder of %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// manifestTemplates renders each kind in canonical form (quantities as the
// server prints them), so that a re-apply is a true no-op. The namespaced
// kinds share one metadata template. Services are headless: the local
// cluster's Service IP range is too small for them all.
const manifestTemplates = `
{{define "namespaced-metadata"}}metadata:
  name: {{.Name}}
  namespace: {{.Namespace}}
  labels:
    app: {{.Name}}
    bench.kapply.io/generation: "{{.Gen}}"
{{end}}
{{define "namespace"}}apiVersion: v1
kind: Namespace
metadata:
  name: {{.Name}}
  labels:
    team: bench
    bench.kapply.io/generation: "{{.Gen}}"
{{end}}
{{define "configmap"}}apiVersion: v1
kind: ConfigMap
{{template "namespaced-metadata" .}}data:
  greeting: hello
  index: "{{.Index}}"
  generation: "{{.Gen}}"
  settings.json: '{"replicas": 2, "generation": {{.Gen}}}'
{{end}}
{{define "deployment"}}apiVersion: apps/v1
kind: Deployment
{{template "namespaced-metadata" .}}spec:
  replicas: 2
  selector:
    matchLabels:
      app: {{.Name}}
  template:
    metadata:
      labels:
        app: {{.Name}}
    spec:
      containers:
      - name: web
        image: registry.example/web:1.{{.Gen}}.0
        ports:
        - name: http
          containerPort: 8080
        env:
        - name: MODE
          value: bench
        - name: INDEX
          value: "{{.Index}}"
        resources:
          requests:
            cpu: 100m
            memory: 64Mi
          limits:
            cpu: 500m
            memory: 256Mi
      - name: sidecar
        image: registry.example/sidecar:2.{{.Gen}}.0
        ports:
        - name: metrics
          containerPort: 9090
        env:
        - name: TARGET
          value: localhost:8080
        resources:
          requests:
            cpu: 10m
            memory: 16Mi
          limits:
            cpu: 100m
            memory: 64Mi
{{end}}
{{define "service"}}apiVersion: v1
kind: Service
{{template "namespaced-metadata" .}}spec:
  clusterIP: None
  selector:
    app: {{.Name}}
  ports:
  - name: http
    port: 80
    targetPort: 8080
  - name: metrics
    port: 9090
    targetPort: 9090
{{end}}
{{define "widget"}}apiVersion: bench.kapply.io/v1
kind: Widget
{{template "namespaced-metadata" .}}spec:
  size: {{.Index}}
  image: registry.example/widget:3.{{.Gen}}.0
  rules:
  - name: http
    port: 80
    path: /{{.Name}}/{{.Gen}}
  - name: metrics
    port: 9090
    path: /metrics
{{end}}`

// crdManifest is the CRD of the Widgets, which the benchmark creates once,
// before any tool runs, so that every tool (kubectl cannot apply a CRD and
// its resources in one run) applies custom resources of an established
// kind. Its rules are a map list, merged by name.
const crdManifest = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.bench.kapply.io
spec:
  group: bench.kapply.io
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    listKind: WidgetList
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size:
                type: integer
              image:
                type: string
              rules:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name:
                      type: string
                    port:
                      type: integer
                    path:
                      type: string
`
