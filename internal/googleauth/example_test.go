package googleauth_test

import (
	"context"
	"fmt"

	calendar "google.golang.org/api/calendar/v3"

	"github.com/calsyncd/calsyncd/internal/config"
	"github.com/calsyncd/calsyncd/internal/googleauth"
)

// An account becomes a Calendar client; with an emulator endpoint and no
// credentials, requests go unauthenticated.
func ExampleLoad() {
	ctx := context.Background()
	cfg, err := config.Parse("/etc/calsyncd/config.yaml", []byte(`
state_dir: /var/lib/calsyncd
google:
  endpoint: http://127.0.0.1:8080/calendar/v3/
`), nil)
	if err != nil {
		panic(err)
	}
	creds, err := googleauth.Load(ctx, cfg, config.DefaultAccount, googleauth.Options{})
	if err != nil {
		panic(err)
	}
	svc, err := calendar.NewService(ctx, creds.ClientOptions()...)
	if err != nil {
		panic(err)
	}
	fmt.Println(creds.Identity)
	fmt.Println(svc.BasePath)
	fmt.Println(googleauth.TokenFile(cfg, config.Account{Name: "work"}))
	// Output:
	// unauthenticated (emulator endpoint)
	// http://127.0.0.1:8080/calendar/v3/
	// /var/lib/calsyncd/token-work.json
}
