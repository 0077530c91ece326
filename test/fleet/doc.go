// Package fleet tests kapply over many contexts against three real API
// servers started for the test binary: rollouts in waves, and clusters
// that refuse, hang, deny or die mid-run while the others complete.
package fleet
