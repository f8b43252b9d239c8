// Command pageviews is a service outside hourglass's tree that counts page views with its store,
// as a service that fetched the module would: the module's tests build it and run it against a
// real Redis, and check that it pulls in nothing of the console.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hourglass-dev/hourglass/store"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: pageviews ADDR EVENTS")
		os.Exit(2)
	}
	events, err := strconv.Atoi(os.Args[2])
	if err != nil || events < 1 || events > 1_000_000 {
		fmt.Fprintln(os.Stderr, "pageviews: EVENTS is a whole number from 1 to 1000000")
		os.Exit(2)
	}
	if err := count(os.Args[1], events); err != nil {
		fmt.Fprintln(os.Stderr, "pageviews:", err)
		os.Exit(1)
	}
}

// count adds events page views of "home" to the current hour and day, in one flush, and prints
// the hour's key and value as the store reads them back.
func count(addr string, events int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	f, err := store.NewFamily(store.FamilySpec{
		Name: "page_views", Pattern: "pv:<page>:<window>",
		HourFormat: "yyyyMMddHH", HourRetention: 48 * time.Hour,
		DayFormat: "yyyyMMdd", DayRetention: 30 * 24 * time.Hour,
	})
	if err != nil {
		return err
	}
	st := store.New(rdb, store.Options{Location: time.UTC})
	if err := st.Init(ctx); err != nil {
		return err
	}
	w := st.NewWriter(store.WriterOptions{})
	for range events {
		if err := w.Add(f, []string{"home"}, 1, time.Time{}); err != nil {
			return err
		}
	}
	if _, err := w.Flush(ctx); err != nil {
		return err
	}
	v, err := st.Get(ctx, f, store.Hour, []string{"home"}, time.Time{})
	if err != nil {
		return err
	}
	fmt.Println(v.Key, v.Value)
	return nil
}
