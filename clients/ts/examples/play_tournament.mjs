// Plays a hold'em tournament you are registered in, checking or calling, to its end:
// node play_tournament.mjs ws://HOST:PORT/[,ws://...] TOKEN TOURNAMENT_ID
import { Client, croupier } from "@croupier/client";

const { HoldemMove } = croupier;
const [urls, token, id] = process.argv.slice(2);
const client = new Client({ urls: urls.split(","), token });
await client.connect();
let mySeat = -1;
const over = new Promise((resolve) => {
    client.on("tournamentSeat", (e) => {                // the helper's steps
        if (e.kind === "waiting") console.log(`waiting for a seat (${e.detail})`);
        if (e.kind === "seated") {
            mySeat = e.snapshot.yourSeat;
            console.log(`seated at table ${e.deskId}, seat ${mySeat + 1}`);
        }
        if (e.kind === "left") console.log(`left the table: ${e.detail}`);  // moved, busted, broken
        if (e.kind === "finished") {
            console.log(e.won ? `won: prize ${e.prize}` : `out: place ${e.place}, prize ${e.prize}`);
            resolve();
        }
        if (e.kind === "stopped") {
            console.log(`stopped: ${e.error.message}`);
            resolve();
        }
    });
});
client.on("turn", (t) => {                              // your turn at the table you sit at
    if (t.seat !== mySeat) return;
    const move = t.toCall > 0 ? HoldemMove.HOLDEM_CALL : HoldemMove.HOLDEM_CHECK;
    client.act({ holdem: { move } }).catch(() => {});   // a hand already over: nothing to do
});
await client.playTournament(Number(id), { timeoutMs: 120000 }).catch(() => {}); // the first seat
await over;                                             // TableClosing{CLOSING_TOURNAMENT}: followed
client.close();
