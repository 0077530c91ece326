package offswitch

import "testing"

// TestOff: "off" in any case, "false" and "0" turn a part off; unset,
// empty and every other value leave it on.
func TestOff(t *testing.T) {
	const name = "KAPPLY_OFFSWITCH_TEST"
	for value, want := range map[string]bool{
		"off": true, "OFF": true, "Off": true, " off\n": true, "false": true, "FALSE": true, "0": true,
		"": false, "on": false, "1": false, "true": false, "of": false, "offf": false, "no": false,
	} {
		t.Setenv(name, value)
		if got := Off(name); got != want {
			t.Errorf("%s=%q: Off %v, want %v", name, value, got, want)
		}
	}
}
