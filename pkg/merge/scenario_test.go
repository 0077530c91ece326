package merge

import (
	"testing"
)

// scenario is one differential case: inline YAML for each side of a merge
// of a built-in kind, and optionally the merged object we expect (checked in
// addition to kubectl's).
type scenario struct {
	name              string
	kind              string
	lastApplied, file string
	live              string
	want              string
}

func TestBuiltinScenarios(t *testing.T) {
	bs := builtins(t)
	for _, sc := range builtinScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			l, f, c := decodeYAML(t, sc.lastApplied), decodeYAML(t, sc.file), decodeYAML(t, sc.live)
			plan := checkAgainstOracle(t, bs[sc.kind], l, f, c)
			if sc.want == "" {
				return
			}
			if ok, d := sameObject(decodeYAML(t, sc.want), plan.Merged, false); !ok {
				t.Errorf("merged differs from the scenario's expectation:\n%s", d)
			}
		})
	}
}

func builtinScenarios() []scenario {
	var all []scenario
	for _, group := range [][]scenario{
		deploymentScenarios(), podScenarios(), listScenarios(), orderScenarios(),
		serviceScenarios(), configMapScenarios(), workloadScenarios(), replaceMapScenarios(),
	} {
		all = append(all, group...)
	}
	return all
}

func deploymentScenarios() []scenario {
	return []scenario{{
		name: "primitive replaced", kind: "Deployment",
		lastApplied: `spec: {replicas: 1}`,
		file:        `spec: {replicas: 3}`,
		live:        `spec: {replicas: 1, revisionHistoryLimit: 10}`,
		want:        `spec: {replicas: 3, revisionHistoryLimit: 10}`,
	}, {
		name: "labels and annotations merged", kind: "Deployment",
		lastApplied: `metadata: {labels: {app: a, old: x}, annotations: {a: "1", b: "2"}}`,
		file:        `metadata: {labels: {app: a, tier: web}, annotations: {a: "1"}}`,
		live:        `metadata: {labels: {app: a, old: x, team: t}, annotations: {a: "1", b: "2", c: "3"}, resourceVersion: "7"}`,
		want:        `metadata: {labels: {app: a, tier: web, team: t}, annotations: {a: "1", c: "3"}, resourceVersion: "7"}`,
	}, {
		name: "strategy switched to Recreate drops defaulted rollingUpdate", kind: "Deployment",
		lastApplied: `spec: {replicas: 1}`,
		file:        `spec: {replicas: 1, strategy: {type: Recreate}}`,
		live:        `spec: {replicas: 1, strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}}`,
		want:        `spec: {replicas: 1, strategy: {type: Recreate}}`,
	}, {
		name: "empty strategy in file keeps live", kind: "Deployment",
		file: `spec: {strategy: {}}`,
		live: `spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}`,
		want: `spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1}}}`,
	}, {
		name: "int-or-string keeps its type", kind: "Deployment",
		lastApplied: `spec: {strategy: {rollingUpdate: {maxSurge: 25%}}}`,
		file:        `spec: {strategy: {rollingUpdate: {maxSurge: 2, maxUnavailable: "0"}}}`,
		live:        `spec: {strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}}`,
		want:        `spec: {strategy: {rollingUpdate: {maxSurge: 2, maxUnavailable: "0"}}}`,
	}, {
		name: "null in file clears a field", kind: "Deployment",
		file: `spec: {minReadySeconds: null, template: {spec: {nodeSelector: null}}}`,
		live: `spec: {minReadySeconds: 5, paused: false, template: {spec: {nodeSelector: {disk: ssd}, dnsPolicy: ClusterFirst}}}`,
		want: `spec: {paused: false, template: {spec: {dnsPolicy: ClusterFirst}}}`,
	}, {
		name: "fields removed from file are deleted", kind: "Deployment",
		lastApplied: `spec: {minReadySeconds: 5, template: {spec: {containers: [{name: web, image: a, resources: {limits: {cpu: "1", memory: 1Gi}}}]}}}`,
		file:        `spec: {template: {spec: {containers: [{name: web, image: a, resources: {limits: {cpu: "1"}}}]}}}`,
		live:        `spec: {minReadySeconds: 5, template: {spec: {containers: [{name: web, image: a, imagePullPolicy: Always, resources: {limits: {cpu: "1", memory: 1Gi}}}]}}}`,
		want:        `spec: {template: {spec: {containers: [{name: web, image: a, imagePullPolicy: Always, resources: {limits: {cpu: "1"}}}]}}}`,
	}, {
		name: "first apply over an object without last-applied", kind: "Deployment",
		file: `metadata: {labels: {app: a}}
spec: {replicas: 2, template: {spec: {containers: [{name: web, image: b}]}}}`,
		live: `metadata: {labels: {app: a, x: y}}
spec: {replicas: 1, template: {spec: {containers: [{name: web, image: a, ports: [{containerPort: 80}]}, {name: side, image: s}]}}}`,
	}, {
		name: "nothing to do", kind: "Deployment",
		lastApplied: `spec: {replicas: 2}`,
		file:        `spec: {replicas: 2}`,
		live:        `spec: {replicas: 2, paused: false}`,
	}, {
		name: "object created from nothing", kind: "Deployment",
		file: `metadata: {name: d, labels: {a: b}}
spec: {replicas: 2, selector: {matchLabels: {a: b}}, template: {spec: {containers: [{name: web, image: x, env: [{name: A, value: "1"}]}]}}}`,
	}}
}

func podScenarios() []scenario {
	return []scenario{{
		name: "containers merged by name keep live-only container and field", kind: "Pod",
		lastApplied: `spec: {containers: [{name: nginx, image: "nginx:1.16"}, {name: helper-a, image: "helper:1.3"}, {name: helper-b, image: "helper:1.3"}]}`,
		file:        `spec: {containers: [{name: nginx, image: "nginx:1.16"}, {name: helper-b, image: "helper:1.3"}, {name: helper-c, image: "helper:1.3"}]}`,
		live:        `spec: {containers: [{name: nginx, image: "nginx:1.16"}, {name: helper-a, image: "helper:1.3"}, {name: helper-b, image: "helper:1.3", args: [run]}, {name: helper-d, image: "helper:1.3"}]}`,
		// The page says the order is not guaranteed; the server puts
		// helper-d before the new helper-c because helper-a was deleted
		// (see positionsAfterDelete).
		want: `spec: {containers: [{name: nginx, image: "nginx:1.16"}, {name: helper-b, image: "helper:1.3", args: [run]}, {name: helper-d, image: "helper:1.3"}, {name: helper-c, image: "helper:1.3"}]}`,
	}, {
		name: "args list replaced whole", kind: "Pod",
		lastApplied: `spec: {containers: [{name: c, args: [a, b]}]}`,
		file:        `spec: {containers: [{name: c, args: [a, c]}]}`,
		live:        `spec: {containers: [{name: c, args: [a, b, d]}]}`,
		want:        `spec: {containers: [{name: c, args: [a, c]}]}`,
	}, {
		name: "env merged by name", kind: "Pod",
		lastApplied: `spec: {containers: [{name: c, env: [{name: A, value: "1"}, {name: B, value: "2"}]}]}`,
		file:        `spec: {containers: [{name: c, env: [{name: A, value: "9"}, {name: C, value: "3"}]}]}`,
		live:        `spec: {containers: [{name: c, env: [{name: B, value: "2"}, {name: A, value: "1"}, {name: D, value: "4"}]}]}`,
	}, {
		name: "env value switched to valueFrom", kind: "Pod",
		lastApplied: `spec: {containers: [{name: c, env: [{name: A, value: "1"}]}]}`,
		file:        `spec: {containers: [{name: c, env: [{name: A, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]}]}`,
		live:        `spec: {containers: [{name: c, env: [{name: A, value: "1"}]}]}`,
	}, {
		name: "volumes retainKeys drop the old volume source", kind: "Pod",
		lastApplied: `spec: {volumes: [{name: data, emptyDir: {}}, {name: cfg, configMap: {name: x}}]}`,
		file:        `spec: {volumes: [{name: data, hostPath: {path: /x}}, {name: cfg, configMap: {name: y}}]}`,
		live:        `spec: {volumes: [{name: data, emptyDir: {}}, {name: cfg, configMap: {name: x, defaultMode: 420}}, {name: token, projected: {sources: []}}]}`,
	}, {
		name: "volume source replaced although last-applied never had the old one", kind: "Pod",
		file: `spec: {volumes: [{name: data, secret: {secretName: s}}]}`,
		live: `spec: {volumes: [{name: data, emptyDir: {medium: Memory}}]}`,
		want: `spec: {volumes: [{name: data, secret: {secretName: s}}]}`,
	}, {
		name: "container ports merged by containerPort", kind: "Pod",
		lastApplied: `spec: {containers: [{name: c, ports: [{containerPort: 80}, {containerPort: 81}]}]}`,
		file:        `spec: {containers: [{name: c, ports: [{containerPort: 80, name: http}, {containerPort: 443}]}]}`,
		live:        `spec: {containers: [{name: c, ports: [{containerPort: 80, protocol: TCP}, {containerPort: 81, protocol: TCP}, {containerPort: 9090, protocol: TCP}]}]}`,
	}, {
		name: "tolerations atomic", kind: "Pod",
		lastApplied: `spec: {tolerations: [{key: a, operator: Exists}]}`,
		file:        `spec: {tolerations: [{key: b, operator: Exists}]}`,
		live:        `spec: {tolerations: [{key: a, operator: Exists}, {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}]}`,
		want:        `spec: {tolerations: [{key: b, operator: Exists}]}`,
	}, {
		name: "finalizers set merged", kind: "Pod",
		lastApplied: `metadata: {finalizers: [a, b]}`,
		file:        `metadata: {finalizers: [a, c]}`,
		live:        `metadata: {finalizers: [b, x, a]}`,
	}, {
		name: "volumeMounts by mountPath and imagePullSecrets by name", kind: "Pod",
		lastApplied: `spec: {imagePullSecrets: [{name: r1}], containers: [{name: c, volumeMounts: [{mountPath: /a, name: v1}]}]}`,
		file:        `spec: {imagePullSecrets: [{name: r2}], containers: [{name: c, volumeMounts: [{mountPath: /a, name: v2}, {mountPath: /b, name: v1}]}]}`,
		live:        `spec: {imagePullSecrets: [{name: r1}, {name: r0}], containers: [{name: c, volumeMounts: [{mountPath: /a, name: v1, readOnly: true}, {mountPath: /var/run/secrets, name: tok}]}]}`,
	}, {
		name: "container removed from file is deleted", kind: "Pod",
		lastApplied: `spec: {initContainers: [{name: i1, image: x}], containers: [{name: a, image: x}, {name: b, image: y}]}`,
		file:        `spec: {initContainers: [], containers: [{name: a, image: x}]}`,
		live:        `spec: {initContainers: [{name: i1, image: x}, {name: i2, image: z}], containers: [{name: a, image: x}, {name: b, image: y}]}`,
	}, {
		name: "hostAliases by ip and resources maps merged", kind: "Pod",
		lastApplied: `spec: {hostAliases: [{ip: 10.0.0.1, hostnames: [a]}], containers: [{name: c, resources: {requests: {cpu: 100m}}}]}`,
		file:        `spec: {hostAliases: [{ip: 10.0.0.2, hostnames: [b]}], containers: [{name: c, resources: {requests: {memory: 1Gi}}}]}`,
		live:        `spec: {hostAliases: [{ip: 10.0.0.1, hostnames: [a]}, {ip: 10.0.0.9, hostnames: [z]}], containers: [{name: c, resources: {requests: {cpu: 100m, ephemeral-storage: 1Gi}}}]}`,
	}}
}

func listScenarios() []scenario {
	return []scenario{{
		name: "list absent from live is added as in the file", kind: "Pod",
		lastApplied: `spec: {containers: [{name: c, env: [{name: A, value: "1"}, {name: B}]}]}`,
		file:        `spec: {containers: [{name: c, env: [{name: B, value: "2"}, {name: A}]}]}`,
		live:        `spec: {containers: [{name: c}]}`,
	}, {
		name: "element in last-applied and file but not live", kind: "Pod",
		lastApplied: `spec: {containers: [{name: a, image: x, command: [sh]}, {name: b, image: y}]}`,
		file:        `spec: {containers: [{name: a, image: x}, {name: b, image: y}]}`,
		live:        `spec: {containers: [{name: b, image: y}]}`,
	}, {
		name: "list emptied in the file", kind: "Pod",
		lastApplied: `metadata: {finalizers: [a]}
spec: {containers: [{name: c, env: [{name: A}]}]}`,
		file: `metadata: {finalizers: []}
spec: {containers: [{name: c, env: []}]}`,
		live: `metadata: {finalizers: [a, z]}
spec: {containers: [{name: c, env: [{name: A}, {name: Z}]}]}`,
	}, {
		name: "list removed from the file", kind: "Pod",
		lastApplied: `spec: {containers: [{name: c, env: [{name: A}], args: [x]}]}`,
		file:        `spec: {containers: [{name: c}]}`,
		live:        `spec: {containers: [{name: c, env: [{name: A}, {name: Z}], args: [x]}]}`,
		want:        `spec: {containers: [{name: c}]}`,
	}}
}

func orderScenarios() []scenario {
	return []scenario{{
		name: "order follows the file", kind: "Pod",
		file: `spec: {containers: [{name: b}, {name: a}]}`,
		live: `spec: {containers: [{name: a}, {name: b}]}`,
		want: `spec: {containers: [{name: b}, {name: a}]}`,
	}, {
		name: "live-only elements keep their place", kind: "Pod",
		file: `spec: {containers: [{name: a}, {name: c}, {name: new}]}`,
		live: `spec: {containers: [{name: x}, {name: a}, {name: y}, {name: c}, {name: z}]}`,
	}, {
		name: "deletion shifts where new elements go", kind: "Pod",
		lastApplied: `spec: {containers: [{name: a}, {name: b}]}`,
		file:        `spec: {containers: [{name: c}, {name: a}]}`,
		live:        `spec: {containers: [{name: a}, {name: x}, {name: b}, {name: y}]}`,
	}, {
		name: "set order follows the file", kind: "Pod",
		lastApplied: `metadata: {finalizers: [a]}`,
		file:        `metadata: {finalizers: [c, b]}`,
		live:        `metadata: {finalizers: [b, x, a, w]}`,
	}}
}

func serviceScenarios() []scenario {
	return []scenario{{
		name: "service ports by port keep the allocated nodePort", kind: "Service",
		lastApplied: `spec: {type: NodePort, selector: {app: a}, ports: [{port: 80, targetPort: 8080}]}`,
		file:        `spec: {type: NodePort, selector: {app: b}, ports: [{port: 80, targetPort: http}, {port: 443}]}`,
		live:        `spec: {type: NodePort, clusterIP: 10.0.0.1, clusterIPs: [10.0.0.1], selector: {app: a}, ports: [{port: 80, targetPort: 8080, nodePort: 30080, protocol: TCP}]}`,
		want:        `spec: {type: NodePort, clusterIP: 10.0.0.1, clusterIPs: [10.0.0.1], selector: {app: b}, ports: [{port: 80, targetPort: http, nodePort: 30080, protocol: TCP}, {port: 443}]}`,
	}, {
		name: "service type change removes a field from last-applied", kind: "Service",
		lastApplied: `spec: {type: LoadBalancer, externalTrafficPolicy: Local, loadBalancerSourceRanges: [1.2.3.4/32]}`,
		file:        `spec: {type: ClusterIP}`,
		live:        `spec: {type: LoadBalancer, externalTrafficPolicy: Local, loadBalancerSourceRanges: [1.2.3.4/32], sessionAffinity: None}`,
		want:        `spec: {type: ClusterIP, sessionAffinity: None}`,
	}}
}

func configMapScenarios() []scenario {
	return []scenario{{
		name: "configmap data merged", kind: "ConfigMap",
		lastApplied: `data: {a: "1", b: "2"}`,
		file: `data: {a: "10", c: "3"}
binaryData: {bin: aGVsbG8=}`,
		live: `data: {a: "1", b: "2", z: "0"}`,
		want: `data: {a: "10", c: "3", z: "0"}
binaryData: {bin: aGVsbG8=}`,
	}, {
		name: "last-applied annotation is an ordinary field", kind: "ConfigMap",
		lastApplied: `metadata: {annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}}`,
		file:        `metadata: {annotations: {kubectl.kubernetes.io/last-applied-configuration: '{"data":{}}'}}`,
		live:        `metadata: {annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}", other: x}}`,
	}}
}

func workloadScenarios() []scenario {
	return []scenario{{
		name: "daemonset update strategy and template", kind: "DaemonSet",
		lastApplied: `spec: {updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1}}, template: {metadata: {labels: {a: b}}}}`,
		file:        `spec: {updateStrategy: {type: OnDelete}, template: {metadata: {labels: {a: c}}}}`,
		live:        `spec: {updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1, maxSurge: 0}}, template: {metadata: {labels: {a: b}}}}`,
	}, {
		name: "statefulset volumeClaimTemplates atomic", kind: "StatefulSet",
		lastApplied: `spec: {volumeClaimTemplates: [{metadata: {name: d}, spec: {accessModes: [ReadWriteOnce]}}]}`,
		file:        `spec: {replicas: 2, volumeClaimTemplates: [{metadata: {name: d}, spec: {accessModes: [ReadWriteMany]}}]}`,
		live:        `spec: {replicas: 1, podManagementPolicy: OrderedReady, volumeClaimTemplates: [{metadata: {name: d}, spec: {accessModes: [ReadWriteOnce], volumeMode: Filesystem}}]}`,
	}, {
		name: "job template containers and backoffLimit", kind: "Job",
		lastApplied: `spec: {backoffLimit: 3, template: {spec: {restartPolicy: Never, containers: [{name: j, image: a, command: [run]}]}}}`,
		file:        `spec: {template: {spec: {restartPolicy: Never, containers: [{name: j, image: b}]}}}`,
		live:        `spec: {backoffLimit: 3, completions: 1, template: {metadata: {labels: {batch.kubernetes.io/job-name: j}}, spec: {restartPolicy: Never, containers: [{name: j, image: a, command: [run], terminationMessagePath: /dev/termination-log}]}}}`,
	}}
}

// replaceMapScenarios: a PodDisruptionBudget's spec.selector has patch
// strategy replace, so the server replaces it whole with the patch's: the
// file's selector replaces live's, and the patch must carry all of it.
func replaceMapScenarios() []scenario {
	return []scenario{{
		name: "replace map: selector gains a label and keeps the old one", kind: "PodDisruptionBudget",
		lastApplied: `spec: {minAvailable: 2, selector: {matchLabels: {app: web}}}`,
		file:        `spec: {maxUnavailable: 25%, selector: {matchLabels: {app: web, tier: fe}}}`,
		live:        `spec: {minAvailable: 2, selector: {matchLabels: {app: web}}}`,
		want:        `spec: {maxUnavailable: 25%, selector: {matchLabels: {app: web, tier: fe}}}`,
	}, {
		name: "replace map: another writer's label is dropped", kind: "PodDisruptionBudget",
		lastApplied: `spec: {selector: {matchLabels: {app: web}}}`,
		file:        `spec: {selector: {matchLabels: {app: web}}}`,
		live:        `spec: {selector: {matchLabels: {app: web, team: t}}}`,
		want:        `spec: {selector: {matchLabels: {app: web}}}`,
	}, {
		name: "replace map: labels switched to expressions", kind: "PodDisruptionBudget",
		lastApplied: `spec: {selector: {matchLabels: {app: web}}}`,
		file:        `spec: {selector: {matchExpressions: [{key: app, operator: In, values: [web]}]}}`,
		live:        `spec: {selector: {matchLabels: {app: web}}, minAvailable: 1}`,
		want:        `spec: {selector: {matchExpressions: [{key: app, operator: In, values: [web]}]}, minAvailable: 1}`,
	}, {
		name: "replace map: absent from the file, kept from live", kind: "PodDisruptionBudget",
		file: `spec: {minAvailable: 1}`,
		live: `spec: {selector: {matchLabels: {app: web}}, minAvailable: 2}`,
		want: `spec: {selector: {matchLabels: {app: web}}, minAvailable: 1}`,
	}, {
		name: "replace map: removed from the file", kind: "PodDisruptionBudget",
		lastApplied: `spec: {selector: {matchLabels: {app: web}}}`,
		file:        `spec: {minAvailable: 1}`,
		live:        `spec: {selector: {matchLabels: {app: web}}}`,
		want:        `spec: {minAvailable: 1}`,
	}}
}
