import { Component } from '@angular/core';
import { PersonalPart } from '../personal-part';

/** A page that nests one personal part in another: a mistake PersonalPart reports with an Error. */
@Component({
  selector: 'app-parts-nested',
  imports: [PersonalPart],
  template: `
    <h1>Nested parts</h1>
    <personal-part name="visitor" [inputs]="{ id: 'outer' }">
      <personal-part name="slow">inner placeholder</personal-part>
    </personal-part>
  `,
})
export default class PartsNested {}
