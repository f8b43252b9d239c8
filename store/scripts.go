package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/redis/go-redis/v9"
)

// luaFiles are the store's scripts, one file each under lua/, every one opening with a comment
// that lists its KEYS, ARGV and reply.
//
//go:embed lua/*.lua
var luaFiles embed.FS

// luaScript is the script in lua/<name>.lua.
func luaScript(name string) *redis.Script { return LuaScript(luaFiles, name) }

// LuaScript is the script lua/<name>.lua of files, a package's embedded scripts. The scripts are
// package-level variables, so a name with no file panics when the package is initialised,
// before any test or program runs.
func LuaScript(files fs.ReadFileFS, name string) *redis.Script {
	src, err := files.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic(fmt.Sprintf("store: no script lua/%s.lua: %v", name, err))
	}
	return redis.NewScript(string(src))
}

// incrWindows adds deltas to counter keys and sets window-aligned expiry on keys without a TTL.
var incrWindows = luaScript("incr_windows")

// scripts are loaded on every master before pipelined EVALSHA calls.
var scripts = []*redis.Script{incrWindows}

// LoadScripts loads the store's Lua scripts on every master (every node of a standalone client),
// so pipelined EVALSHA calls find them. Call it again after a restart or a failover; the writer
// does so by itself when Redis answers NOSCRIPT.
func (s *Store) LoadScripts(ctx context.Context) error {
	load := func(ctx context.Context, c redis.Scripter) error {
		for _, sc := range scripts {
			if err := sc.Load(ctx, c).Err(); err != nil {
				return fmt.Errorf("store: load scripts: %w", err)
			}
		}
		return nil
	}
	var err error
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return load(ctx, c) })
	} else {
		err = load(ctx, s.rdb)
	}
	s.scriptsLoaded.Store(err == nil)
	return err
}

// CounterScriptHash is the SHA1 of the counter script (lua/incr_windows.lua), for tools that call
// it directly (hourglass bench hands it to redis-benchmark).
func CounterScriptHash() string { return incrWindows.Hash() }
