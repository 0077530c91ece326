package plan

// gateJSON is a Gate on the wire: the header member "gates", one per
// wave, written only when the plan has more than one wave.
type gateJSON struct {
	APIServices []idJSON      `json:"apiServices,omitempty"`
	Ready       []idJSON      `json:"ready,omitempty"`
	Webhooks    []webhookJSON `json:"webhooks,omitempty"`
}

type webhookJSON struct {
	Configuration idJSON `json:"configuration"`
	Probe         idJSON `json:"probe"`
	Webhook       string `json:"webhook"`
}

func idToWire(id ID) idJSON {
	return idJSON{Group: id.Group, Kind: id.Kind, Name: id.Name, Namespace: id.Namespace, Version: id.Version}
}

func idsToWire(ids []ID) []idJSON {
	var out []idJSON
	for _, id := range ids {
		out = append(out, idToWire(id))
	}
	return out
}

func idsFromWire(in []idJSON) []ID {
	var out []ID
	for _, id := range in {
		out = append(out, id.id())
	}
	return out
}

func gatesToWire(gates []Gate) []gateJSON {
	out := make([]gateJSON, len(gates))
	for i, g := range gates {
		out[i] = gateJSON{APIServices: idsToWire(g.APIServices), Ready: idsToWire(g.Ready)}
		for _, w := range g.Webhooks {
			out[i].Webhooks = append(out[i].Webhooks, webhookJSON{Configuration: idToWire(w.Configuration), Probe: idToWire(w.Probe), Webhook: w.Webhook})
		}
	}
	return out
}

func gatesFromWire(in []gateJSON) []Gate {
	if len(in) == 0 {
		return nil
	}
	out := make([]Gate, len(in))
	for i, g := range in {
		out[i] = Gate{APIServices: idsFromWire(g.APIServices), Ready: idsFromWire(g.Ready)}
		for _, w := range g.Webhooks {
			out[i].Webhooks = append(out[i].Webhooks, WebhookGate{Configuration: w.Configuration.id(), Probe: w.Probe.id(), Webhook: w.Webhook})
		}
	}
	return out
}
