package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/googleauth"
)

type authCommand struct{ m *Main }

func (c *authCommand) Synopsis() string { return "authorise calsyncd with Google (login, status)" }

func (c *authCommand) Run(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(c.m.Stderr, `Usage: calsyncd auth <subcommand> [flags]

Subcommands:
  login   authorise calsyncd to use your Google account (opens a loopback listener)
  status  show which identity each account uses and whether it can get a token

Run `+"`calsyncd auth <subcommand> -h`"+` for its flags.
`)
		if len(args) == 0 {
			return &exitError{code: 2}
		}
		return nil
	}
	switch args[0] {
	case "login":
		return c.login(ctx, args[1:])
	case "status":
		return c.status(ctx, args[1:])
	}
	return &exitError{code: 2, err: fmt.Errorf("unknown auth subcommand %q (want login or status)", args[0])}
}

func (c *authCommand) login(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("auth login", "auth login --config FILE [--account NAME] [--port N] [--timeout 5m]")
	cfgPath := configFlag(fs)
	account := fs.String("account", config.DefaultAccount, "the account to log in (a name under accounts:, or default)")
	port := fs.Int("port", 0, "loopback port to listen on (0: any free port; fix one to forward it over SSH)")
	timeout := fs.Duration("timeout", googleauth.DefaultLoginTimeout, "how long to wait for the browser")
	args, err := parseArgs(fs, args)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if fs.NArg() > 0 {
		return &exitError{code: 2, err: fmt.Errorf("unexpected arguments: %s", strings.Join(args, " "))}
	}
	cfg, err := c.loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	path, err := googleauth.Login(ctx, cfg, *account, googleauth.LoginOptions{Out: c.m.Stdout, Port: *port, Timeout: *timeout})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.m.Stdout, "\nSaved the token for account %s to %s (readable only by its owner).\n", *account, path)
	fmt.Fprintf(c.m.Stdout, "Check it with: calsyncd auth status --config %s\n", cfg.Path)
	return nil
}

func (c *authCommand) status(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("auth status", "auth status --config FILE [--strict-perms]")
	cfgPath := configFlag(fs)
	strictPerms := fs.Bool("strict-perms", false, "fail when a key or token file is accessible to group or others, or a configuration file (the main one or one it includes) is writable by them")
	args, err := parseArgs(fs, args)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	cfg, err := c.loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	used := map[string]bool{}
	for _, s := range cfg.Subscriptions {
		used[s.AccountName()] = true
	}
	problems := googleauth.CheckPermissions(cfg)
	loose := len(problems)
	for _, p := range googleauth.CheckConfigFile(cfg) {
		fmt.Fprintf(c.m.Stdout, "warning: %s\n\n", p)
		if p.Writable {
			loose++
		}
	}
	failed := 0
	for i, name := range cfg.AccountNames() {
		if i > 0 {
			fmt.Fprintln(c.m.Stdout)
		}
		if !c.printAccount(ctx, cfg, name, used[name], problems) {
			failed++
		}
	}
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%s cannot authenticate", plural(failed, "account", "accounts"))}
	}
	if *strictPerms && loose > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%s open to group or others (--strict-perms)", plural(loose, "configuration, key or token file is", "configuration, key or token files are"))}
	}
	return nil
}

// printAccount says who an account is, where its credentials and token
// are and what is wrong with them; it reports whether the account can
// authenticate (one no subscription uses and nothing configures can).
func (c *authCommand) printAccount(ctx context.Context, cfg *config.Config, name string, used bool, problems []googleauth.Problem) bool {
	out := c.m.Stdout
	acct, _ := cfg.AccountByName(name)
	if acct.CredentialsFile == "" && acct.Endpoint == "" && !used {
		fmt.Fprintf(out, "%s: not configured (no subscription uses it)\n", name)
		return true
	}
	st := googleauth.Inspect(ctx, cfg, name, googleauth.Options{Logger: slog.New(slog.NewTextHandler(c.m.Stderr, nil))})
	identity := st.Identity.String()
	if st.Kind == "" {
		identity = "unknown (the credentials could not be read)"
	}
	fmt.Fprintf(out, "%s: %s\n", name, identity)
	if st.CredentialsFile != "" {
		fmt.Fprintf(out, "  credentials  %s\n", st.CredentialsFile)
	}
	if st.TokenFile != "" {
		fmt.Fprintf(out, "  token file   %s\n", st.TokenFile)
	}
	fmt.Fprintf(out, "  token        %s\n", st.Token)
	if st.Err != nil {
		fmt.Fprintf(out, "  problem      %v\n", st.Err)
	}
	for _, p := range problems {
		if p.Account == name {
			fmt.Fprintf(out, "  warning      %s file %s is accessible to group or others (mode %04o): chmod 600 %s\n",
				p.What, p.Path, p.Mode, p.Path)
		}
	}
	return st.Err == nil
}

// loadConfig loads the configuration for the auth commands. They need
// state_dir and the accounts, not the other secrets, so a ${VAR} left unset
// elsewhere (a feed token, the status token) is noted and ignored: `auth
// login` runs as the service's user without the service's environment file,
// which only systemd reads. An unset variable in what they need is an error.
func (c *authCommand) loadConfig(path string) (*config.Config, error) {
	return loadConfigNeeding(path, c.m.Stderr, func(key string) bool {
		return key == "state_dir" || strings.HasPrefix(key, "google.") || strings.HasPrefix(key, "accounts[")
	})
}

// checkSecretFiles warns about key and token files that group or others can
// read, and about a configuration file others may change or whose literal
// secrets they may read; with strict it refuses to go on for any of them
// but the last (a warning only). Commands that talk to Google call it once
// at start-up.
func checkSecretFiles(log *slog.Logger, cfg *config.Config, strict bool) error {
	var refused []string
	for _, p := range googleauth.CheckConfigFile(cfg) {
		log.Warn(configProblemSummary(p), "file", p.Path, "mode", fmt.Sprintf("%04o", p.Mode),
			"secrets", strings.Join(p.Keys, ","), "fix", p.Fix())
		if p.Writable {
			refused = append(refused, p.String())
		}
	}
	for _, p := range googleauth.CheckPermissions(cfg) {
		log.Warn("key or token file is accessible to group or others", "account", p.Account, "file", p.Path,
			"mode", fmt.Sprintf("%04o", p.Mode), "fix", "chmod 600 "+p.Path)
		refused = append(refused, p.String())
	}
	if strict && len(refused) > 0 {
		more := ""
		if len(refused) > 1 {
			more = fmt.Sprintf(" (and %d more)", len(refused)-1)
		}
		return &exitError{code: 1, err: fmt.Errorf("refusing to start (--strict-perms): %s%s", refused[0], more)}
	}
	return nil
}

func configProblemSummary(p googleauth.ConfigProblem) string {
	if p.Writable {
		return "the configuration file can be changed by group or others"
	}
	return "the configuration file holds secrets others can read"
}
