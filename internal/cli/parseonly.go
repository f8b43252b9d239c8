package cli

import (
	"context"
	"flag"

	"github.com/hourglass-dev/hourglass/internal/config"
)

// A parse-only run ends each command once its flags are checked and its config is loaded. It stops
// where the command would first connect, write a file or start a server. The fuzz test of flag
// values runs any command line this way, and none reaches Redis.

// parseOnlyKey marks a parse-only context; its value is the parsedHook.
type parseOnlyKey struct{}

// parsedHook is called at that point with the command's flags and config (nil when the command
// loads none, as bench without --addr); its error ends the command.
type parsedHook func(fs *flag.FlagSet, cfg *config.Config) error

// withParseOnly returns a context in which commands end at the hook.
func withParseOnly(ctx context.Context, hook parsedHook) context.Context {
	return context.WithValue(ctx, parseOnlyKey{}, hook)
}

// parsed runs the hook of a parse-only context; in any other it returns nil and the command goes
// on.
func parsed(ctx context.Context, fs *flag.FlagSet, cfg *config.Config) error {
	if hook, ok := ctx.Value(parseOnlyKey{}).(parsedHook); ok {
		return hook(fs, cfg)
	}
	return nil
}
