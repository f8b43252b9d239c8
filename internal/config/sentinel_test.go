package config

import (
	"strings"
	"testing"
)

// The Sentinel keys make a Sentinel target: the master name, the Sentinels, their own login
// apart from the data nodes'; --addr replaces the Sentinels and master name and keeps that login.
func TestSentinelKeys(t *testing.T) {
	t.Setenv("HG_SENTINEL_PW", "s-pass")
	t.Setenv("HG_DATA_PW", "d-pass")
	text := []byte(`[redis]
username = "app"
password_env = "HG_DATA_PW"
sentinel_master = "prod"
sentinel_addrs = ["10.0.0.1:26379", "10.0.0.2:26379"]
sentinel_username = "watch"
sentinel_password_env = "HG_SENTINEL_PW"
`)
	cfg, err := Parse("config.toml", text, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Redis.Real() || !strings.Contains(cfg.Redis.Shown(), "prod") {
		t.Fatalf("a Sentinel master is a real Redis: real %v, shown %q", cfg.Redis.Real(), cfg.Redis.Shown())
	}
	tg, err := cfg.Redis.Target()
	if err != nil {
		t.Fatal(err)
	}
	s := tg.Sentinel
	if s == nil || s.Master != "prod" || len(tg.Addrs) != 2 || s.Username != "watch" || s.Password != "s-pass" ||
		tg.Username != "app" || tg.Password != "d-pass" || tg.Mode() != "sentinel" {
		t.Fatalf("target %+v, sentinel %+v", tg, s)
	}
	cfg, err = Parse("config.toml", text, []string{"redis-sentinel://10.0.0.9:26379/other"})
	if err != nil {
		t.Fatal(err)
	}
	if tg, err = cfg.Redis.Target(); err != nil {
		t.Fatal(err)
	}
	if s := tg.Sentinel; s == nil || s.Master != "other" || tg.Addrs[0] != "10.0.0.9:26379" || len(tg.Addrs) != 1 || s.Password != "s-pass" {
		t.Fatalf("--addr over the file's Sentinels: %+v, %+v", tg, s)
	}
	if cfg, err = Parse("config.toml", text, []string{"127.0.0.1:6379"}); err != nil || cfg.Redis.Sentinel.Master != "" {
		t.Fatalf("--addr host:port over the file's Sentinels: %v, %+v", err, cfg.Redis.Sentinel)
	}
}
