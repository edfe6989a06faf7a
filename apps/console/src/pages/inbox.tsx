/** The approvals inbox (issue #19 item 4). Filled in by the inbox work. */
import { PageTitle } from '../ui.tsx';

/** `#/inbox` */
export function InboxPage() {
  return <PageTitle>Approvals</PageTitle>;
}
