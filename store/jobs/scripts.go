package jobs

import (
	"embed"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

// luaFiles are the scripts of the job side's writes, one file each under lua/, every one opening
// with a comment that lists its KEYS, ARGV and reply.
//
//go:embed lua/*.lua
var luaFiles embed.FS

// luaScript is the script in lua/<name>.lua; a name with no file panics when the package is
// initialised.
func luaScript(name string) *redis.Script { return store.LuaScript(luaFiles, name) }
