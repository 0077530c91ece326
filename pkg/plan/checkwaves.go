package plan

import "fmt"

// checkWaves checks the plan's order: every item in a wave the plan
// has, the first wave without a gate, and every gate naming objects the
// plan writes in earlier waves (a probe: one of the gated wave), so a
// plan cannot hold back a wave for an object it does not send, or send
// one before what it waits for.
func checkWaves(p *Plan) error {
	removals := 0
	for _, it := range p.Items {
		if it.removal() {
			removals++
		}
	}
	for i, it := range p.Items {
		if it.Wave < 0 {
			return fmt.Errorf("%w: item %d (%s) is in wave %d", ErrInvalid, i+1, it.ID, it.Wave)
		}
		// A removal's wave is its place among the removals' groups, of
		// which there are at most as many as removals: Execute makes a
		// group per place up to it.
		if it.removal() && it.Wave >= removals {
			return fmt.Errorf("%w: item %d (%s) is removed in place %d; the plan has %d removals", ErrInvalid, i+1, it.ID, it.Wave, removals)
		}
	}
	if len(p.Gates) == 0 {
		for i, it := range p.Items {
			// A removal's wave is its place among the removals, last
			// wave first, which no gate holds.
			if it.Wave != 0 && !it.removal() {
				return fmt.Errorf("%w: item %d (%s) is in wave %d of a plan without waves", ErrInvalid, i+1, it.ID, it.Wave)
			}
		}
		return nil
	}
	first := p.Gates[0]
	if len(first.Ready)+len(first.Webhooks)+len(first.APIServices) > 0 {
		return fmt.Errorf("%w: the first wave has a gate", ErrInvalid)
	}
	waveOf := make(map[ID]int, len(p.Items))
	for i, it := range p.Items {
		if it.removal() {
			continue
		}
		if it.Wave >= len(p.Gates) {
			return fmt.Errorf("%w: item %d (%s) is in wave %d; the plan has %d", ErrInvalid, i+1, it.ID, it.Wave, len(p.Gates))
		}
		waveOf[it.ID] = it.Wave
	}
	for w, g := range p.Gates {
		earlier := func(what string, id ID) error {
			if at, ok := waveOf[id]; !ok || at >= w {
				return fmt.Errorf("%w: wave %d waits for %s %s, which the plan does not send before it", ErrInvalid, w, what, id)
			}
			return nil
		}
		for _, id := range g.Ready {
			if err := earlier("the readiness of", id); err != nil {
				return err
			}
		}
		for _, id := range g.APIServices {
			if err := earlier("the APIService", id); err != nil {
				return err
			}
		}
		for _, hook := range g.Webhooks {
			if err := earlier("the webhook configuration", hook.Configuration); err != nil {
				return err
			}
			if at, ok := waveOf[hook.Probe]; !ok || at != w {
				return fmt.Errorf("%w: wave %d probes webhook %q with %s, which is not in it", ErrInvalid, w, hook.Webhook, hook.Probe)
			}
		}
	}
	return nil
}

func (it Item) removal() bool { return it.Action == Prune || it.Action == Delete }
