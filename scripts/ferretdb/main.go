// Command ferretdb runs the embeddable FerretDB with its SQLite handler for local development and
// tests: loopback only, telemetry disabled (the embedded package never reports). With
// -exit-with-parent it stops when its standard input closes, so it never outlives its launcher.
package main

import (
	"context"
	"flag"
	"io"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	dir := flag.String("data", "data/ferretdb", "folder of the SQLite databases")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	exitWithParent := flag.Bool("exit-with-parent", false, "exit when standard input closes")
	flag.Parse()

	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		log.Fatal(err)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Handler:   "sqlite",
		SQLiteURL: "file:" + *dir + "/",
		Logger:    logger,
	})
	if err != nil {
		log.Fatal(err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *exitWithParent {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			stop()
		}()
	}
	logger.Info("listening", "address", *listen, "data", *dir)
	if err := f.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
