package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kcluster "github.com/kapply/kapply/pkg/cluster"
)

// addChunkSizeFlag adds kubectl's --chunk-size (cmdutil.AddChunkSizeFlag:
// the same name, default and words): the objects each LIST asks for per
// page; 0 lists in one answer.
func addChunkSizeFlag(cmd *cobra.Command, chunkSize *int64) {
	cmd.Flags().Int64Var(chunkSize, "chunk-size", kcluster.DefaultChunkSize,
		"Return large lists in chunks rather than all at once. Pass 0 to disable.")
}

// chunkSizeOption is --chunk-size as apply.Options.ChunkSize takes it,
// where 0 means the default and a negative size no chunks.
func chunkSizeOption(flag int64) int64 {
	if flag <= 0 {
		return -1
	}
	return flag
}

// bareDryRun is the value of a --dry-run given without one: kubectl's
// NoOptDefVal, which means "client", with a warning.
const bareDryRun = "unchanged"

// addKubectlDryRunFlag adds --dry-run as kubectl has it: "none", "client"
// or "server"; bare, or as a boolean, deprecated but accepted.
func addKubectlDryRunFlag(cmd *cobra.Command, dryRun *string, usage string) {
	cmd.Flags().StringVar(dryRun, "dry-run", "none", usage)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = bareDryRun
}

// addDryRunFlag adds --dry-run as addKubectlDryRunFlag to a command other
// than apply (delete, adopt, release, last-applied set), and prints
// kubectl's deprecation warning for a bare or boolean value before the
// command runs: every command of kapply reads --dry-run as kubectl 1.37's
// GetDryRunStrategy does, one rule for all.
func addDryRunFlag(cmd *cobra.Command, dryRun *string, usage string) {
	addKubectlDryRunFlag(cmd, dryRun, usage)
	cmd.PreRun = func(cmd *cobra.Command, _ []string) {
		if warning := dryRunDeprecation(*dryRun); warning != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "Warning: %s\n", warning)
		}
	}
}

// dryRunUsage is the --dry-run help of the commands that write records.
const dryRunUsage = `"none", "client" (print what would change, send nothing; also a bare --dry-run, deprecated as in kubectl) or "server" (the server's dry run)`

// parseDryRun reads --dry-run as kubectl does (GetDryRunStrategy): a bare
// --dry-run and "true" mean client, "false" none.
func parseDryRun(s string) (kcluster.DryRun, error) {
	switch s {
	case "none", "":
		return kcluster.NoDryRun, nil
	case "client", bareDryRun:
		return kcluster.ClientDryRun, nil
	case "server":
		return kcluster.ServerDryRun, nil
	}
	b, err := strconv.ParseBool(s)
	switch {
	case err != nil:
		return kcluster.NoDryRun, fmt.Errorf(`Invalid dry-run value (%v). Must be "none", "server", or "client".`, s)
	case b:
		return kcluster.ClientDryRun, nil
	}
	return kcluster.NoDryRun, nil
}

// dryRunDeprecation is kubectl's warning for a bare or boolean --dry-run,
// or "".
func dryRunDeprecation(s string) string {
	switch s {
	case bareDryRun:
		return "--dry-run is deprecated and can be replaced with --dry-run=client."
	}
	b, err := strconv.ParseBool(s)
	switch {
	case err != nil:
		return ""
	case b:
		return fmt.Sprintf("--dry-run=%s is deprecated (boolean value) and can be replaced with --dry-run=client.", s)
	}
	return fmt.Sprintf("--dry-run=%s is deprecated (boolean value) and can be replaced with --dry-run=none.", s)
}

// addValidateFlag adds --validate as kubectl has it, strict by default.
func addValidateFlag(cmd *cobra.Command, validate *string) {
	cmd.Flags().StringVar(validate, "validate", "strict", `how the server treats fields the schema does not know (the fieldValidation of every write): "strict" (refuse the object; also "true"), "warn" (print the server's warning and drop them) or "ignore" (drop them silently; also "false")`)
	cmd.Flags().Lookup("validate").NoOptDefVal = "strict"
}

// parseValidate reads --validate as kubectl does (GetValidationDirective).
func parseValidate(s string) (string, error) {
	switch s {
	case "strict":
		return metav1.FieldValidationStrict, nil
	case "warn":
		return metav1.FieldValidationWarn, nil
	case "ignore":
		return metav1.FieldValidationIgnore, nil
	}
	b, err := strconv.ParseBool(s)
	switch {
	case err != nil:
		return "", fmt.Errorf(`invalid - validate option %q; must be one of: strict (or true), warn, ignore (or false)`, s)
	case b:
		return metav1.FieldValidationStrict, nil
	}
	return metav1.FieldValidationIgnore, nil
}

// addOverwriteFlag adds kubectl's --overwrite (default true) bound to
// *noOverwrite, its negation, so that options built without the flag
// (diff's) keep kubectl's default.
func addOverwriteFlag(cmd *cobra.Command, noOverwrite *bool, usage string) {
	cmd.Flags().Var(negatedBool{noOverwrite}, "overwrite", usage)
	cmd.Flags().Lookup("overwrite").NoOptDefVal = "true"
}

// negatedBool is a boolean flag stored negated.
type negatedBool struct{ p *bool }

func (b negatedBool) String() string {
	if b.p == nil {
		return "true"
	}
	return strconv.FormatBool(!*b.p)
}

func (b negatedBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*b.p = !v
	return nil
}

func (negatedBool) Type() string { return "bool" }
