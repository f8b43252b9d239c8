// Package limits reads the keys other rate-limiting libraries write (python limits,
// rate-limiter-flexible, redis_rate), as each library itself would answer for them: used,
// refused, remaining, at its limit. Each library is one row of the table in layouts.go and a
// file named after it. It only reads.
//
// hourglass's own limiter is store's; this package is the console's. Of hourglass's packages it
// imports store.
package limits
