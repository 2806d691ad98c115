package googleauth_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/calsyncd/calsyncd/internal/googleauth"
)

func TestCheckPermissions(t *testing.T) {
	oauth := newFakeOAuth(t)
	cfg, dir := setup(t, map[string]string{
		"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: sa.json\naccounts:\n" +
			"  - name: me\n    credentials_file: client.json\n  - name: other\n    credentials_file: missing.json\n",
		"sa.json":             oauth.serviceAccountKey(),
		"client.json":         oauth.desktopClient(),
		"state/token-me.json": tokenJSON("a", "r", time.Now()),
	})
	if got := googleauth.CheckPermissions(cfg); len(got) != 0 {
		t.Fatalf("private files: problems %v", got)
	}
	os.Chmod(filepath.Join(dir, "sa.json"), 0o644)
	os.Chmod(filepath.Join(dir, "state", "token-me.json"), 0o660)
	got := googleauth.CheckPermissions(cfg)
	want := []googleauth.Problem{
		{Account: "default", What: "credentials", Path: filepath.Join(dir, "sa.json"), Mode: 0o644},
		{Account: "me", What: "token", Path: filepath.Join(dir, "state", "token-me.json"), Mode: 0o660},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("problems = %v\nwant %v", got, want)
	}
	if s := got[0].String(); !strings.Contains(s, "mode 0644") || !strings.Contains(s, "chmod 600 "+filepath.Join(dir, "sa.json")) {
		t.Errorf("String() = %q", s)
	}
}

func TestInspect(t *testing.T) {
	oauth := newFakeOAuth(t)
	future := time.Now().Add(time.Hour).Truncate(time.Second)
	cfg, _ := setup(t, map[string]string{
		"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: sa.json\n  impersonate: alice@example.com\naccounts:\n" +
			"  - name: valid\n    credentials_file: client.json\n" +
			"  - name: expired\n    credentials_file: client.json\n" +
			"  - name: absent\n    credentials_file: client.json\n",
		"sa.json":                  oauth.serviceAccountKey(),
		"client.json":              oauth.desktopClient(),
		"state/token-valid.json":   tokenJSON("valid-access-secret", "valid-refresh-secret", future),
		"state/token-expired.json": tokenJSON("old-access-secret", "old-refresh-secret", time.Now().Add(-time.Hour)),
	})
	tests := []struct {
		account   string
		kind      googleauth.Kind
		wantToken string
		wantErr   string
	}{
		{"default", googleauth.KindServiceAccount, "Google issued an access token", ""},
		{"valid", googleauth.KindUser, "access token valid until " + future.Local().Format(time.RFC3339), ""},
		{"expired", googleauth.KindUser, "refreshed and saved", ""},
		{"absent", googleauth.KindUser, "unusable", "auth login --config " + cfg.Path + " --account absent"},
	}
	for _, tc := range tests {
		t.Run(tc.account, func(t *testing.T) {
			st := googleauth.Inspect(context.Background(), cfg, tc.account, googleauth.Options{})
			if st.Kind != tc.kind || !strings.Contains(st.Token, tc.wantToken) {
				t.Errorf("Inspect = kind %q token %q, want %q / %q", st.Kind, st.Token, tc.kind, tc.wantToken)
			}
			if (st.Err != nil) != (tc.wantErr != "") || (st.Err != nil && !strings.Contains(st.Err.Error(), tc.wantErr)) {
				t.Errorf("Err = %v, want %q", st.Err, tc.wantErr)
			}
			if all := fmt.Sprintf("%+v %v", st, st.Err); strings.Contains(all, "secret") || strings.Contains(all, "access-1") {
				t.Errorf("the status leaks a token: %s", all)
			}
		})
	}
	// The refresh Inspect did was saved.
	tok, err := googleauth.ReadToken(filepath.Join(filepath.Dir(cfg.Path), "state", "token-expired.json"))
	if err != nil || tok.AccessToken == "old-access-secret" {
		t.Errorf("refreshed token not saved: %v", err)
	}

	oauth.failWith(400, `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}`)
	os.WriteFile(filepath.Join(filepath.Dir(cfg.Path), "state", "token-expired.json"),
		[]byte(tokenJSON("old-access-secret", "old-refresh-secret", time.Now().Add(-time.Hour))), 0o600)
	st := googleauth.Inspect(context.Background(), cfg, "expired", googleauth.Options{})
	var aerr *googleauth.Error
	if !errors.As(st.Err, &aerr) || aerr.Reason != "invalid_grant" || !strings.Contains(st.Err.Error(), "--account expired") {
		t.Errorf("revoked: Err = %v", st.Err)
	}
}
