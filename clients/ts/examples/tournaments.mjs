// Lists the tournaments open for registration, registers in one and waits for its start:
// node tournaments.mjs ws://HOST:PORT/[,ws://...] TOKEN [TOURNAMENT_ID]
import { Client, CroupierError, croupier } from "@croupier/client";

const { TournamentStatus, TournamentEventKind, TournamentEntryState } = croupier;
const [urls, token, id] = process.argv.slice(2);
const client = new Client({ urls: urls.split(","), token });
await client.connect();
const { tournaments, total } = await client.listTournaments({ status: TournamentStatus.TOUR_REGISTERING, limit: 10 });
console.log(`${tournaments.length} of ${total} tournaments open for registration`);
for (const t of tournaments)
    console.log(`#${t.id} ${t.name}: buy-in ${t.buyIn}+${t.fee}, ${t.entrants}/${t.maxEntrants} entrants`);
const tour = Number(id ?? tournaments[0]?.id ?? 0);
if (tour === 0) {
    client.close();
    process.exit(0);
}
let timer;
const over = new Promise((resolve) => {
    client.on("tournamentEvent", (e) => {               // pushed for the tournaments you follow
        console.log(`#${e.tournament}: ${TournamentEventKind[e.kind]}`);
        if (e.kind === TournamentEventKind.TOUR_EVENT_STARTED || e.kind === TournamentEventKind.TOUR_EVENT_CANCELLED)
            resolve();
    });
    timer = setTimeout(resolve, 30000);
});
try {
    await client.registerTournament(tour);             // buy-in + fee from the wallet
    console.log(`registered in #${tour}`);
} catch (e) {
    if (!(e instanceof CroupierError)) throw e;
    console.log(`not registered: ${e.codeName}`);      // ALREADY_REGISTERED, TOURNAMENT_FULL, INSUFFICIENT_FUNDS, ...
}
const info = await client.getTournament(tour);         // the state, and your entry (`you`)
console.log(`${info.name}: ${TournamentStatus[info.status]}, ${info.entries}/${info.maxEntrants} entries, prize pool ${info.prizePool}`);
if (info.you) console.log(`your entry: ${TournamentEntryState[info.you.state]}, stack ${info.you.stack}`);
await over;                                            // the start (or its cancellation), at most 30 s
clearTimeout(timer);
client.close();
