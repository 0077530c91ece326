package plan

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// wavedPlan is samplePlan with its first two items in wave 0 and the rest
// in wave 1, which waits for the first item to be ready and probes a
// webhook of the second with the third.
func wavedPlan(t testing.TB) *Plan {
	p := samplePlan(t)
	for i := range p.Items {
		if i >= 2 {
			p.Items[i].Wave, p.Items[i].WaveReason = 1, "sync-wave 1"
		}
	}
	p.Gates = []Gate{{}, {Ready: []ID{p.Items[0].ID},
		Webhooks: []WebhookGate{{Configuration: p.Items[1].ID, Webhook: "check.example.com", Probe: p.Items[3].ID}}}}
	return p
}

// TestGatesSurviveTheFile: a plan's waves and gates are what Decode gives
// back, and an edited gate fails the checksum.
func TestGatesSurviveTheFile(t *testing.T) {
	p := wavedPlan(t)
	data := encode(t, p)
	got, err := Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Gates, p.Gates) {
		t.Errorf("gates: %+v, want %+v", got.Gates, p.Gates)
	}
	for i, it := range got.Items {
		if it.Wave != p.Items[i].Wave || it.WaveReason != p.Items[i].WaveReason {
			t.Errorf("item %d: wave %d %q, want %d %q", i, it.Wave, it.WaveReason, p.Items[i].Wave, p.Items[i].WaveReason)
		}
	}
	edited := bytes.Replace(data, []byte("check.example.com"), []byte("other.example.com"), 1)
	if _, err := Decode(bytes.NewReader(edited)); err == nil || !strings.Contains(err.Error(), "changed after it was written") {
		t.Errorf("an edited gate: %v, want the checksum's refusal", err)
	}
}

// TestCheckWavesRefuses: a plan whose gate waits for an object it does
// not send before the wave, whose first wave has a gate, or whose item is
// in a wave it lacks, is invalid.
func TestCheckWavesRefuses(t *testing.T) {
	for name, edit := range map[string]func(p *Plan){
		"waits for a later object": func(p *Plan) { p.Gates[1].Ready = append(p.Gates[1].Ready, p.Items[4].ID) },
		"waits for an absent one": func(p *Plan) {
			p.Gates[1].Ready = append(p.Gates[1].Ready, ID{Version: "v1", Kind: "ConfigMap", Name: "nowhere"})
		},
		"probes outside the wave": func(p *Plan) { p.Gates[1].Webhooks[0].Probe = p.Items[0].ID },
		"first wave gated":        func(p *Plan) { p.Gates[0].Ready = []ID{p.Items[0].ID} },
		"item past the waves":     func(p *Plan) { p.Items[4].Wave = 2 },
		"waves without gates":     func(p *Plan) { p.Gates = nil },
		// A removal's wave is its place among the removals: one far past
		// them would make Execute allocate a group per wave up to it.
		"removal past the removals": func(p *Plan) { p.Items[5].Wave = 1 << 40 },
	} {
		p := wavedPlan(t)
		edit(p)
		if err := Check(p); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if err := Check(wavedPlan(t)); err != nil {
		t.Errorf("the waved plan: %v", err)
	}
	unwaved := samplePlan(t)
	unwaved.Items[5].Wave = 1 << 40
	if err := Check(unwaved); !errors.Is(err, ErrInvalid) {
		t.Errorf("a plan without waves, its prune item in wave 1<<40: %v, want ErrInvalid", err)
	}
	unwaved.Items[5].Wave = 1 // two removals: places 0 and 1
	if err := Check(unwaved); err != nil {
		t.Errorf("a plan whose second removal goes second: %v", err)
	}
}
