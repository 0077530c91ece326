package cluster

import (
	"fmt"
	"os/exec"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd/api"
)

// checkPolicy applies kubectl's credential plugin policy (kuberc's
// credentialPluginPolicy and credentialPluginAllowlist) to cmd, in
// client-go's words; an allowed cmd runs the path the allowlist matched.
func (p execPlugin) checkPolicy(cmd *exec.Cmd) error {
	policy := p.config.PluginPolicy
	switch policy.PolicyType {
	case "", api.PluginPolicyAllowAll:
		return nil
	case api.PluginPolicyDenyAll:
		return fmt.Errorf("plugin %q not allowed: policy set to %q", p.command, api.PluginPolicyDenyAll)
	case api.PluginPolicyAllowlist:
		return p.checkAllowlist(cmd, policy.Allowlist)
	}
	return fmt.Errorf("unknown plugin policy %q", policy.PolicyType)
}

// checkAllowlist: the command as written or as resolved on PATH is an
// entry as written or as resolved (entries of the same base name only).
func (p execPlugin) checkAllowlist(cmd *exec.Cmd, allowlist []api.AllowlistEntry) error {
	allowed := map[string]bool{}
	for _, entry := range allowlist {
		allowed[entry.Command] = true
	}
	if allowed[p.command] || allowed[cmd.Path] {
		return nil
	}
	resolved, err := cmd.Path, cmd.Err
	if cmd.Path == p.command {
		resolved, err = exec.LookPath(cmd.Path)
		if resolved != "" {
			cmd.Path = resolved
		}
	}
	if err != nil {
		return fmt.Errorf("plugin path %q cannot be resolved for credential plugin allowlist check: %w", cmd.Path, err)
	}
	if allowed[resolved] {
		return nil
	}
	for _, entry := range allowlist {
		if filepath.Base(entry.Command) != filepath.Base(cmd.Path) {
			continue
		}
		if path, err := exec.LookPath(entry.Command); err == nil && path == resolved {
			return nil
		}
	}
	return fmt.Errorf("plugin path %q is not permitted by the credential plugin allowlist", cmd.Path)
}
